/**
 * A node agent with identity is not ready before SPIRE has given it the trust bundle (it could
 * serve nothing over mTLS), and says why on /readyz; it becomes ready once the SPIRE agent is
 * there. An edge with identity answers /readyz while it waits for its first SVID, saying so.
 * Real SPIRE, real Envoy.
 */
import assert from "node:assert/strict";
import { startSpire } from "./spire.ts";
import { startIdentityEdge, startIdentityNode } from "./identity_harness.ts";
import { freePort } from "../testbed/free_port.ts";
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

Deno.test("edge identity: /readyz says it waits for the edge's first SVID, then it starts", async () => {
  const spire = await startSpire();
  await spire.stopAgent();
  const admin = `127.0.0.1:${freePort()}`;
  const starting = startIdentityEdge([], spire, [], admin);
  try {
    const url = `http://${admin}/readyz`;
    const why = await waitFor("the edge's /readyz", async () => {
      const r = await fetch(url).catch(() => undefined);
      const text = await r?.text();
      return r?.status === 503 ? text : undefined;
    }, 30_000);
    assert.match(why, /waiting for this edge's first SVID from the Workload API/);
    await spire.startAgent();
    await starting;
    const after = await (await fetch(url)).text();
    assert.doesNotMatch(after, /first SVID/, after);
    // Its own SVID's gauges are on its /metrics.
    const metrics = await (await fetch(`http://${admin}/metrics`)).text();
    assert.match(
      metrics,
      new RegExp(`aether_identity_svid_expiry_seconds\\{spiffe_id="${spire.agentId}"\\} [1-9]`),
    );
    assert.ok(
      metrics.includes(`aether_identity_svid_renewal_overdue{spiffe_id="${spire.agentId}"} 0`),
    );
  } finally {
    await starting.then((e) => e.close(), () => {});
    await spire.stop();
  }
});
