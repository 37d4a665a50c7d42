import assert from "node:assert/strict";
import { parseDurationSeconds, run } from "./main.ts";

Deno.test("parseDurationSeconds: Go-style h/m/s and plain seconds", () => {
  assert.equal(parseDurationSeconds("svid-ttl", "1h"), 3600);
  assert.equal(parseDurationSeconds("svid-ttl", "90s"), 90);
  assert.equal(parseDurationSeconds("svid-ttl", "1h30m"), 5400);
  assert.equal(parseDurationSeconds("svid-ttl", "2m5s"), 125);
  assert.equal(parseDurationSeconds("svid-ttl", "600"), 600);
  for (const bad of ["", "0", "0s", "-5", "1.5", "1d", "h", "5 m", "1s1h"]) {
    assert.throws(() => parseDurationSeconds("svid-ttl", bad), /--svid-ttl/, bad);
  }
});

Deno.test("spire-registrar: usage errors exit 2 before connecting anywhere", async () => {
  const quiet = console.error;
  console.error = () => {};
  try {
    assert.equal(await run(["--trust-domain", "td", "--cluster-name", "c"]), 2);
    assert.equal(await run(["--in-cluster", "--cluster-name", "c"]), 2);
    await assert.rejects(
      () => run(["--in-cluster", "--trust-domain", "Bad/TD", "--cluster-name", "c"]),
      /trust domain/,
    );
  } finally {
    console.error = quiet;
  }
});
