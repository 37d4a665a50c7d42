import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { envoyBootstrap } from "../xds/server/mod.ts";
import { bootstrapFor } from "./mod.ts";

Deno.test("agent bootstrap: the node role's bootstrap, addresses from the flags", () => {
  const b = bootstrapFor(["--node-name", "n1", "--envoy-admin-address", "127.0.0.1:15009"]);
  assert.deepEqual(
    b,
    envoyBootstrap({
      nodeId: "n1",
      cluster: "aether-node",
      xdsAddress: "127.0.0.1",
      xdsPort: 18000,
      adminAddress: "127.0.0.1",
      adminPort: 15009,
      delta: true,
      maxDownstreamConnections: 50_000,
    }),
  );
  const eager = bootstrapFor(["--node-name", "n1", "--envoy-eager-stats"]) as Record<
    string,
    unknown
  >;
  assert.equal("deferred_stat_options" in eager, false);
  assert.deepEqual((b as Record<string, unknown>).deferred_stat_options, {
    enable_deferred_creation_stats: true,
  });
  assert.match(String(bootstrapFor([])), /--node-name is required/);
  assert.match(
    String(bootstrapFor(["--node-name", "n", "--max-downstream-connections", "x"])),
    /whole number/,
  );
});

Deno.test("agent bootstrap: a real Envoy accepts it (--mode validate)", async () => {
  const envoy = await ensurePeer("envoy");
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "bootstrap.json");
    await Deno.writeTextFile(file, JSON.stringify(bootstrapFor(["--node-name", "n1"])));
    const out = await new Deno.Command(envoy, {
      args: ["--mode", "validate", "-c", file, "--use-dynamic-base-id"],
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    assert.ok(out.success, text);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
