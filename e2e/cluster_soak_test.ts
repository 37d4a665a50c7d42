/**
 * The churn soak's short version (e2e/soak.ts; `deno task bench soak --minutes N` runs the long
 * one): three minutes of the schedule — node agent, node proxy, edge and controller replaced, a
 * route edited, the backend scaled and rolled, the API server restarted — under 50 req/s through
 * the mesh and 50 req/s through an edge. Every request must succeed, every action complete (RSS
 * is reported; only a soak of 10 minutes or more judges its growth).
 */
import assert from "node:assert/strict";
import { withCluster } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { runSoak } from "./soak.ts";

Deno.test({
  name: "local cluster: 3-minute churn soak — every aether process replaced, 0 failed requests",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    for (const p of ["helm", "kubectl", "curl"]) await ensurePeer(p);
    await withCluster(async (c) => {
      const r = await runSoak(c, { seconds: 180, log: (l) => console.log(`soak: ${l}`) });
      console.log(
        `soak ${r.seconds} s: mesh ${r.mesh.sent} requests (${r.mesh.failed} failed), edge ` +
          `${r.edge.sent} (${r.edge.failed} failed); ${r.events.length} actions; RSS growth ` +
          JSON.stringify(r.growth),
      );
      assert.deepEqual(r.problems, []);
      assert.ok(r.events.length >= 8, `the schedule ran (${r.events.length} actions)`);
    });
  },
});
