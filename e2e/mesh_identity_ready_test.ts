/**
 * A node agent with identity is not ready before SPIRE has given it the trust bundle (it could
 * serve nothing over mTLS), and says why on /readyz; it becomes ready once the SPIRE agent is
 * there. Real SPIRE, real Envoy.
 */
import assert from "node:assert/strict";
import { startSpire } from "./spire.ts";
import { startIdentityNode } from "./identity_harness.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { waitFor } from "./peers/proc.ts";

Deno.test("mesh identity: /readyz waits for SPIRE's trust bundle, with the reason", async () => {
  const spire = await startSpire();
  const dir = await Deno.makeTempDir({ prefix: "aether-ready-" });
  await spire.stopAgent();
  const agent = await startIdentityNode(dir, "node-a", spire, [], {
    envoy: await ensurePeer("envoy"),
  });
  try {
    const url = `http://${agent.admin.address}/readyz`;
    const held = await fetch(url);
    const why = await held.text();
    assert.equal(held.status, 503, why);
    assert.match(why, /waiting for the SPIRE agent's trust bundle/);
    await spire.startAgent();
    await waitFor("ready once SPIRE is there", async () => {
      const r = await fetch(url);
      await r.body?.cancel();
      return r.status === 200 ? true : undefined;
    }, 60_000);
  } finally {
    await agent.close();
    await spire.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
