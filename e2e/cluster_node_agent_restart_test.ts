/**
 * The node-agent pod deleted on the local cluster under GAMMA load. The DaemonSet controller
 * creates the replacement only once the old pod is gone (measured: 77 s with a 95 s grace period),
 * so the node proxy's Envoy runs in its own pod (the chart's aether-node-proxy DaemonSet): it keeps
 * serving its last configuration while no agent runs and reconnects to the replacement agent. No
 * request fails, the Envoy pod is the same one throughout, and the new agent serves an edit made
 * afterwards. The agents dial the API server at the node address the chart's k8sServiceHost names
 * (as on Talos with KubePrism), not the kubernetes Service's ClusterIP.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withCluster } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import {
  condition,
  type LoadResult,
  releaseNs,
  setUp,
  startLoad,
  waitEdit,
  waitFor,
  workloads,
} from "./cluster_ha.ts";

Deno.test({
  name: "local cluster: node-agent pod deleted under mesh load — Envoy (own pod) keeps serving, " +
    "the new agent takes over, 0 failed",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    for (const p of ["helm", "kubectl", "ip"]) await ensurePeer(p);
    await withCluster(async (c) => {
      const apiServer = `https://${c.layout.nodeIp}:6443`;
      const env = await setUp(c, [`k8sServiceHost=${c.layout.nodeIp}`, "k8sServicePort=6443"]);
      const dir = await Deno.makeTempDir({ prefix: "aether-agent-restart-" });
      const stopFile = join(dir, "stop");
      let load: Promise<LoadResult> | undefined;
      type Pod = {
        metadata: { name: string; uid: string; deletionTimestamp?: string };
        status: {
          conditions?: { type: string; status: string }[];
          containerStatuses?: { restartCount: number }[];
        };
      };
      const pods = async (component: string) =>
        (await env.json([
          "-n",
          releaseNs,
          "get",
          "pods",
          "-l",
          `app.kubernetes.io/component=${component}`,
        ]))
          .items as Pod[];
      const agents = () => pods("agent");
      try {
        const [old] = await agents();
        const [proxy] = await pods("node-proxy");
        load = startLoad(env, "mesh", stopFile).done;
        await new Promise((r) => setTimeout(r, 5_000));
        const deleted = Date.now();
        await env.k(["-n", releaseNs, "delete", "pod", old.metadata.name, "--wait=false"]);
        const fresh = await waitFor(
          "the replacement agent pod Ready",
          async () =>
            (await agents()).find((p) =>
              p.metadata.name !== old.metadata.name && !p.metadata.deletionTimestamp &&
              condition(p.status.conditions, "Ready")?.status === "True"
            ),
        );
        const ready = Date.now();
        const overlapped = (await agents()).some((p) => p.metadata.name === old.metadata.name);
        await waitFor(
          "the old agent pod gone",
          async () =>
            (await agents()).some((p) => p.metadata.name === old.metadata.name) ? undefined : true,
        );
        const gone = Date.now();
        await env.k(["apply", "-f", "-"], workloads("handed-over"));
        await waitEdit(env, "handed-over");
        const log = await env.k(["-n", releaseNs, "logs", fresh.metadata.name]);
        assert.ok(
          log.includes(`"reading configuration from the API server","server":"${apiServer}"`),
          `the agent dials ${apiServer}:\n${log.slice(0, 2000)}`,
        );
        await new Promise((r) => setTimeout(r, 3_000));
        await Deno.writeTextFile(stopFile, "");
        const r = await load;
        load = undefined;
        console.log(
          `node agent ${old.metadata.name} → ${fresh.metadata.name}: replacement Ready ${
            ready - deleted
          } ms after the delete (old pod ${
            overlapped ? "still there then" : "already gone"
          }, gone ${gone - deleted} ms after the delete); mesh ${r.sent} requests at ${
            r.rate.toFixed(0)
          } req/s, ${r.failed} failed, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
        );
        assert.equal(r.failed, 0, `${JSON.stringify(r.statuses)} ${r.errors}`);
        const [after] = await pods("node-proxy");
        assert.equal(after.metadata.uid, proxy.metadata.uid, "the same Envoy pod throughout");
        assert.equal(after.status.containerStatuses?.[0].restartCount, 0, "Envoy never restarted");
        assert.ok(r.rate >= 200, `load was only ${r.rate.toFixed(0)} req/s`);
      } finally {
        await Deno.writeTextFile(stopFile, "").catch(() => {});
        if (load) await load.catch(() => {});
        await env.cleanup();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    });
  },
});
