/**
 * GAMMA to a ServiceImport on real Envoy 1.40 as the node proxy, with a real registry etcd: a
 * producer route of a mesh Service sends /web to a ServiceImport, whose endpoints come from the
 * clusterset registry — this cluster's first, the other cluster's when this cluster has none.
 */
import { assertEquals } from "../testbed/assert.ts";
import { Logger } from "../lib/log/mod.ts";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { closeEchos, startEchos, waitFor } from "./harness.ts";
import { createPod, curlFrom, meshService, podObject, toYaml } from "./mesh_harness.ts";
import { startEtcd } from "./peers/etcd.ts";
import type { SourceObject } from "../lib/source/mod.ts";

const quiet = new Logger("registry", () => {}, "error");

function endpoint(cluster: string, pod: string, echo: { hostname: string; port: number }) {
  return [
    `eps/mesh/web/${pod}`,
    JSON.stringify({
      cluster,
      namespace: "mesh",
      service: "web",
      pod,
      ip: echo.hostname,
      ports: [{ name: "http", protocol: "TCP", port: echo.port }],
    }),
  ] as const;
}

Deno.test("mesh e2e: a GAMMA route to a ServiceImport, this cluster's endpoints first", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-mesh-import-" });
  const etcd = await startEtcd(`${dir}/etcd`);
  const kv = new EtcdKv({ url: etcd.url, timeoutMs: 2000 });
  const writer = (cluster: string) =>
    new OriginWriter({
      kv,
      origin: { region: "eu", cluster },
      writer: cluster,
      ttlSeconds: 5,
      logger: quiet,
    });
  const a = writer("a"), b = writer("b");
  const echos = await startEchos("front", "a1", "b1");
  await a.publish(new Map([endpoint("a.eu", "a1", echos.a1)]));
  await b.publish(new Map([endpoint("b.eu", "b1", echos.b1)]));
  const pod = await createPod();
  const objects: SourceObject[] = [
    ...["mesh", "c"].map((n) => ({ apiVersion: "v1", kind: "Namespace", metadata: { name: n } })),
    ...meshService("front", "mesh", echos.front),
    {
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceImport",
      metadata: { name: "web", namespace: "mesh" },
      spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 8080 }] },
    },
    podObject(pod, "c", "client", "node-1"),
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "front", namespace: "mesh", creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        parentRefs: [{ group: "", kind: "Service", name: "front", port: 8080 }],
        rules: [
          {
            matches: [{ path: { type: "PathPrefix", value: "/web" } }],
            backendRefs: [{
              group: "multicluster.x-k8s.io",
              kind: "ServiceImport",
              name: "web",
              port: 8080,
            }],
          },
          { backendRefs: [{ name: "front", port: 8080 }] },
        ],
      },
    },
  ];
  await Deno.writeTextFile(`${dir}/mesh.yaml`, toYaml(...objects));
  let node: NodeAgent | undefined;
  try {
    node = await runNode({
      ...nodeDefaults,
      envoy: await ensurePeer("envoy"),
      config: dir,
      nodeName: "node-1",
      adminAddress: "127.0.0.1:0",
      xdsAddress: "127.0.0.1:0",
      dnsAddress: "none",
      registryUrl: etcd.url,
      region: "eu",
      cluster: "a",
      logger: new Logger("agent", () => {}, "error"),
    });
    await node.waitReady(60000);
    const host = "front.aether.internal";
    await t.step(
      "this cluster's endpoint answers /web; the rest stays on the Service",
      async () => {
        const web = await curlFrom(pod, host, { path: "/web", count: 20 });
        assertEquals(web.counts, { a1: 20 });
        const rest = await curlFrom(pod, host, { path: "/", count: 5 });
        assertEquals(rest.counts, { front: 5 });
      },
    );
    await t.step("this cluster's endpoints gone: the other cluster's answer", async () => {
      await a.publish(new Map());
      await waitFor("b answers", async () => {
        const r = await curlFrom(pod, host, { path: "/web" });
        return Object.keys(r.counts)[0] === "b1";
      }, 20_000);
      const web = await curlFrom(pod, host, { path: "/web", count: 20 });
      assertEquals(web.counts, { b1: 20 });
    });
  } finally {
    await node?.close();
    await pod.remove();
    await a.stop();
    await b.stop();
    await closeEchos(echos);
    await etcd.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
