/**
 * The API server stopped for 60 s on the local cluster under load through a Gateway (the edge
 * pod) and through the mesh (a client pod's node proxy, GAMMA route): no request fails — the
 * controller, the edge agent and the node agent keep serving their last snapshot — and an edit
 * made after the API server returns applies on both paths (their watches resumed).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withCluster } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { type LoadResult, setUp, startLoad, waitEdit, workloads } from "./cluster_ha.ts";

const outageMs = 60_000;

Deno.test({
  name: "local cluster: API server down 60 s under edge + mesh load — 0 failed, later edits apply",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    for (const p of ["helm", "kubectl", "ip"]) await ensurePeer(p);
    await withCluster(async (c) => {
      const env = await setUp(c);
      const dir = await Deno.makeTempDir({ prefix: "aether-outage-" });
      const stopFile = join(dir, "stop");
      let loads: Promise<LoadResult>[] = [];
      try {
        loads = [startLoad(env, "edge", stopFile).done, startLoad(env, "mesh", stopFile).done];
        await new Promise((r) => setTimeout(r, 5_000));
        await c.stopApiServer();
        const stopped = Date.now();
        await assert.rejects(
          env.k(["get", "ns", "--request-timeout=3s"]),
          "the API server is down",
        );
        await new Promise((r) => setTimeout(r, outageMs - (Date.now() - stopped)));
        await c.startApiServer();
        const back = Date.now();
        await env.k(["apply", "-f", "-"], workloads("after"));
        await waitEdit(env, "after");
        console.log(
          `API server down ${back - stopped} ms; edit applied ${Date.now() - back} ms after`,
        );
        await new Promise((r) => setTimeout(r, 3_000));
        await Deno.writeTextFile(stopFile, "");
        const [edge, mesh] = await Promise.all(loads);
        loads = [];
        for (const [via, r] of [["edge", edge], ["mesh", mesh]] as const) {
          console.log(
            `${via}: ${r.sent} requests at ${r.rate.toFixed(0)} req/s, ${r.failed} failed, ` +
              `p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
          );
          assert.equal(r.failed, 0, `${via}: ${JSON.stringify(r.statuses)} ${r.errors}`);
          assert.ok(r.rate >= 200, `${via}: load was only ${r.rate.toFixed(0)} req/s`);
        }
      } finally {
        await Deno.writeTextFile(stopFile, "").catch(() => {});
        await Promise.allSettled(loads);
        await c.startApiServer();
        await env.cleanup();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    });
  },
});
