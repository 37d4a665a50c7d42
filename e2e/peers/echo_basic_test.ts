/**
 * echo-basic smoke test: the Gateway API conformance backend answers with the request it saw and
 * the pod context it was started with (the conformance suite asserts on exactly this JSON).
 */
import assert from "node:assert/strict";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { freePort, spawn, waitFor } from "./proc.ts";

Deno.test("echo-basic echoes the request and its pod context", async () => {
  const bin = await ensurePeer("echo-basic");
  const [http, h2c, https] = [freePort(), freePort(), freePort()];
  const proc = spawn("echo-basic", bin, [], undefined, {
    HTTP_PORT: String(http),
    H2C_PORT: String(h2c),
    HTTPS_PORT: String(https),
    NAMESPACE: "gateway-conformance-infra",
    POD_NAME: "infra-backend-v1-0",
    SERVICE_NAME: "infra-backend-v1",
  });
  try {
    const body = await waitFor(
      "echo-basic answering",
      async () => {
        const res = await fetch(`http://127.0.0.1:${http}/cart?x=1`, {
          headers: { "x-probe": "1" },
        });
        return res.status === 200 ? await res.json() : undefined;
      },
      60_000,
      [proc],
    );
    assert.equal(body.path, "/cart?x=1");
    assert.equal(body.method, "GET");
    assert.deepEqual(body.headers["X-Probe"], ["1"]);
    assert.equal(body.namespace, "gateway-conformance-infra");
    assert.equal(body.pod, "infra-backend-v1-0");
    assert.equal(body.service, "infra-backend-v1");
  } finally {
    await proc.stop();
  }
});
