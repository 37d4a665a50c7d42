/**
 * GAMMA to a ServiceImport on real Envoy 1.40 as the node proxy, with a real registry etcd: a
 * producer route of a mesh Service sends /web to a ServiceImport, whose endpoints come from the
 * clusterset registry — this cluster's first, the other cluster's when this cluster has none. A
 * route whose parentRef is the ServiceImport holds for its clusterset VIP Service, and that
 * Service without routes reaches the import's endpoints.
 */
import { assertEquals } from "../testbed/assert.ts";
import { Logger } from "../lib/log/mod.ts";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import { VIP_SERVICE_IMPORT_ANNOTATION, vipServiceName } from "../lib/mcs/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { closeEchos, startEchos, waitFor } from "./harness.ts";
import { createPod, curlFrom, meshService, podObject, toYaml } from "./mesh_harness.ts";
import { startEtcd } from "./peers/etcd.ts";
import { endpointEntry } from "./registry_records.ts";
import type { SourceObject } from "../lib/source/mod.ts";

const quiet = new Logger("registry", () => {}, "error");

const endpoint = (
  cluster: string,
  pod: string,
  echo: { hostname: string; port: number },
  service = "web",
) => endpointEntry(cluster, "mesh", service, pod, echo);

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
  const echos = await startEchos("front", "a1", "b1", "api");
  const api = endpoint("a.eu", "api1", echos.api, "api");
  await a.publish(new Map([endpoint("a.eu", "a1", echos.a1), api]));
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
    // The clusterset VIP Services the MCS controller makes: `web`'s with a route for the
    // clusterset service (parentRef ServiceImport), `api`'s with none.
    ...["web", "api"].flatMap((name) => [{
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceImport",
      metadata: { name, namespace: "mesh" },
      spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 8080 }] },
    }, {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: vipServiceName("mesh", name),
        namespace: "mesh",
        annotations: { [VIP_SERVICE_IMPORT_ANNOTATION]: name },
      },
      spec: { ports: [{ name: "http", protocol: "TCP", port: 8080 }] },
    }]).filter((o) => o.kind === "Service" || o.metadata.name === "api"),
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: {
        name: "clusterset-web",
        namespace: "mesh",
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      spec: {
        parentRefs: [{ group: "multicluster.x-k8s.io", kind: "ServiceImport", name: "web" }],
        rules: [
          {
            matches: [{ path: { type: "PathPrefix", value: "/v2" } }],
            backendRefs: [{ name: "front", port: 8080 }],
          },
          {
            backendRefs: [{
              group: "multicluster.x-k8s.io",
              kind: "ServiceImport",
              name: "web",
              port: 8080,
            }],
          },
        ],
      },
    },
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
    await t.step(
      "a route for the clusterset service (parentRef ServiceImport) holds at its VIP Service",
      async () => {
        const vip = `${vipServiceName("mesh", "web")}.aether.internal`;
        assertEquals((await curlFrom(pod, vip, { path: "/v2/x", count: 5 })).counts, { front: 5 });
        assertEquals((await curlFrom(pod, vip, { path: "/", count: 5 })).counts, { a1: 5 });
      },
    );
    await t.step(
      "a clusterset VIP Service without routes reaches its import's endpoints",
      async () => {
        const vip = `${vipServiceName("mesh", "api")}.aether.internal`;
        assertEquals((await curlFrom(pod, vip, { path: "/", count: 5 })).counts, { api: 5 });
      },
    );
    await t.step("this cluster's endpoints gone: the other cluster's answer", async () => {
      await a.publish(new Map([api]));
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
