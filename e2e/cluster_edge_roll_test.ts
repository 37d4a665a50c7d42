/**
 * The edge on the local cluster is replaced and re-listened without a failed request: 100 req/s
 * through the Gateway's LoadBalancer address (MetalLB, kube-proxy) while the edge Deployment is
 * rolled (the new pod first, the old one drains: preStop, then `--shutdown-drain`), then while a
 * listener is added to the Gateway and removed again — which reaches Envoy over xDS and leaves the
 * edge pod as it is (its template does not name the listeners).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { withCluster } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { GATEWAY_LABEL } from "../controller/mod.ts";
import { request } from "./http_client.ts";
import { edgeHost, releaseNs, setUp, startLoad, waitFor } from "./cluster_ha.ts";
import { rollout } from "./kubectl.ts";

const listeners = (extra: boolean) =>
  JSON.stringify({
    spec: {
      listeners: [
        { name: "http", protocol: "HTTP", port: 18080 },
        ...(extra ? [{ name: "extra", protocol: "HTTP", port: 18090 }] : []),
      ],
    },
  });

Deno.test({
  name: "local cluster: edge rolled, a listener added and removed, under load — 0 failed",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    for (const p of ["helm", "kubectl", "curl"]) await ensurePeer(p);
    await withCluster(async (c) => {
      const env = await setUp(c);
      const dir = await Deno.makeTempDir({ prefix: "aether-edge-roll-" });
      try {
        const edgeService = async () =>
          (await env.json(["-n", releaseNs, "get", "service", "-l", `${GATEWAY_LABEL}=default.ha`]))
            .items[0];
        const lb = await waitFor(
          "the edge's LoadBalancer address",
          async () =>
            (await edgeService())?.status?.loadBalancer?.ingress?.[0]?.ip as string | undefined,
        );
        const edgePods = async () =>
          (await env.json(["-n", releaseNs, "get", "pods", "-l", `${GATEWAY_LABEL}=default.ha`]))
            .items as { metadata: { uid: string; deletionTimestamp?: string } }[];
        const deployment = `deployment/${(await edgeService()).metadata.name}`;
        const stopFile = join(dir, "stop");
        const load = startLoad({ ...env, edgeIp: lb }, "edge", stopFile, 100);
        let afterRoll = "";
        try {
          await new Promise((r) => setTimeout(r, 5_000));
          const [before] = await edgePods();
          await env.k(["-n", releaseNs, "rollout", "restart", deployment]);
          await rollout(c.kubeconfig, releaseNs, deployment);
          afterRoll = await waitFor("one edge pod, a new one", async () => {
            const pods = await edgePods();
            return pods.length === 1 && pods[0].metadata.uid !== before.metadata.uid
              ? pods[0].metadata.uid
              : undefined;
          }, 120_000);
          await new Promise((r) => setTimeout(r, 3_000));
          // A listener added: served on its port through the LoadBalancer, the pod untouched.
          await env.k(["patch", "gateway", "ha", "--type=merge", "-p", listeners(true)]);
          await waitFor("the added listener answers through the LoadBalancer", async () => {
            const r = await request({ host: lb, port: 18090, authority: edgeHost, timeoutMs: 3000 })
              .catch(() => undefined);
            return r?.status === 200 ? true : undefined;
          }, 120_000);
          await env.k(["patch", "gateway", "ha", "--type=merge", "-p", listeners(false)]);
          await waitFor(
            "the removed listener's port leaves the Service",
            async () =>
              (await edgeService()).spec.ports.some((p: { port: number }) => p.port === 18090)
                ? undefined
                : true,
            120_000,
          );
          await new Promise((r) => setTimeout(r, 3_000));
          const pods = await edgePods();
          assert.deepEqual(pods.map((p) => p.metadata.uid), [afterRoll], "the same edge pod");
        } finally {
          await Deno.writeTextFile(stopFile, "");
        }
        const r = await load.done;
        console.log(
          `edge roll + listener added and removed under load: ${r.sent} requests, ` +
            `${r.failed} failed, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
        );
        assert.equal(r.failed, 0, `${JSON.stringify(r.statuses)} ${r.errors}`);
        assert.ok(r.sent > 1000, `load ran (${r.sent} requests)`);
      } finally {
        await env.cleanup();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      }
    });
  },
});
