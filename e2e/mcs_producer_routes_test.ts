/**
 * Issue 20 acceptance — a producer HTTPRoute in cluster B (90/10) is obeyed by cluster A's callers:
 * real etcd as the clusterset registry, a real node agent of cluster A with a real Envoy 1.40.
 * Cluster B's origin holds its exported Services' endpoints (web, web-v1, web-v2) and the producer
 * route record its MCS controller writes (the same producerRouteEntries), which A serves for the
 * ServiceImport: a caller in namespace c sees the 90/10 split at the clusterset VIP Service, a
 * malformed record beside it is skipped and counted, a consumer route in namespace d wins for d's
 * callers, and with the record deleted every request reaches web again.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { Logger } from "../lib/log/mod.ts";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import {
  producerRouteEntries,
  VIP_SERVICE_IMPORT_ANNOTATION,
  vipServiceName,
} from "../lib/mcs/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { closeEchos, startEchos, waitFor } from "./harness.ts";
import { createPod, curlFrom, meshService, podObject, toYaml } from "./mesh_harness.ts";
import { startEtcd } from "./peers/etcd.ts";
import { endpointEntry } from "./registry_records.ts";
import type { SourceObject } from "../lib/source/mod.ts";

const quiet = new Logger("registry", () => {}, "error");
const MCS = "multicluster.x-k8s.io";
const PORTS = [{ name: "http", protocol: "TCP", port: 8080 }];

/** Cluster B's producer route of `web`: 90 % web-v1, 10 % web-v2 (as its API server keeps it). */
const split = {
  metadata: { namespace: "shop", name: "canary", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: {
    parentRefs: [{ group: "", kind: "Service", name: "web", port: 8080 }],
    rules: [{
      matches: [{ path: { type: "PathPrefix", value: "/" } }],
      backendRefs: [
        { group: "", kind: "Service", name: "web-v1", port: 8080, weight: 90 },
        { group: "", kind: "Service", name: "web-v2", port: 8080, weight: 10 },
      ],
    }],
  },
};

Deno.test("mcs e2e: B's 90/10 producer route is obeyed by A's callers of the ServiceImport", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-mcs-routes-" });
  const etcd = await startEtcd(`${dir}/etcd`);
  const kv = new EtcdKv({ url: etcd.url, timeoutMs: 2000 });
  const b = new OriginWriter({
    kv,
    origin: { region: "eu", cluster: "b" },
    writer: "b",
    ttlSeconds: 10,
    logger: quiet,
  });
  const echos = await startEchos("web", "v1", "v2", "front");
  const eps = new Map([
    endpointEntry("b.eu", "shop", "web", "web-0", echos.web),
    endpointEntry("b.eu", "shop", "web-v1", "web-v1-0", echos.v1),
    endpointEntry("b.eu", "shop", "web-v2", "web-v2-0", echos.v2),
  ]);
  const routes = producerRouteEntries(
    "b.eu",
    [split],
    new Set(["shop/web", "shop/web-v1", "shop/web-v2"]),
  );
  assertEquals([...routes.keys()], ["routes/HTTPRoute/shop/canary"]);
  await b.publish(new Map([...eps, ...routes, ["routes/HTTPRoute/shop/broken", '{"version":1,']]));

  const [caller, other] = [await createPod(), await createPod()];
  const vipName = vipServiceName("shop", "web");
  const objects: SourceObject[] = [
    ...["shop", "c", "d"].map((n) => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: n },
    })),
    ...["web", "web-v1", "web-v2"].map((name) => ({
      apiVersion: `${MCS}/v1beta1`,
      kind: "ServiceImport",
      metadata: { name, namespace: "shop" },
      spec: { type: "ClusterSetIP", ports: PORTS },
    })),
    // The clusterset VIP Service A's MCS controller makes for the import `web`.
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: vipName,
        namespace: "shop",
        annotations: { [VIP_SERVICE_IMPORT_ANNOTATION]: "web" },
      },
      spec: { ports: PORTS },
    },
    ...meshService("front", "d", echos.front),
    podObject(caller, "c", "caller", "node-1"),
    podObject(other, "d", "other", "node-1"),
    // A consumer route in namespace d for the clusterset service: d's callers go to front.
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "mine", namespace: "d", creationTimestamp: "2026-02-01T00:00:00Z" },
      spec: {
        parentRefs: [{ group: MCS, kind: "ServiceImport", name: "web", namespace: "shop" }],
        rules: [{ backendRefs: [{ name: "front", port: 8080 }] }],
      },
    },
  ];
  await Deno.writeTextFile(`${dir}/a.yaml`, toYaml(...objects));
  const warnings: string[] = [];
  let node: NodeAgent | undefined;
  /** A step that, failing, prints the agent's warnings and status. */
  const step = (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      try {
        await fn();
      } catch (e) {
        console.error(`step "${name}" failed; the agent's warnings:\n${warnings.join("\n")}`);
        console.error(`the agent's status: ${JSON.stringify(node?.status()).slice(0, 6000)}`);
        throw e;
      }
    });
  const vip = `${vipName}.aether.internal`;
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
      logger: new Logger("agent", (line) => warnings.push(line), "warn"),
    });
    await node.waitReady(120_000);

    await step("c's caller: 90 % web-v1, 10 % web-v2 over 400 requests", async () => {
      await waitFor("the producer route at A", async () => {
        const r = await curlFrom(caller, vip, { count: 10 });
        return Object.keys(r.counts).every((k) => k === "v1" || k === "v2");
      }, 120_000);
      const r = await curlFrom(caller, vip, { count: 400 });
      const v1 = r.counts.v1 ?? 0, v2 = r.counts.v2 ?? 0;
      console.log(`web-v1 ${v1}, web-v2 ${v2} (${(100 * v2 / 400).toFixed(1)} % web-v2)`);
      assertEquals(v1 + v2, 400, JSON.stringify(r.counts));
      assert(v2 >= 12 && v2 <= 80, `web-v2 got ${v2} of 400 (3–20 % expected)`);
    });

    await step("the malformed record is skipped and counted", async () => {
      const counted = /aether_registry_malformed_records\{kind="route"\} 1\b/;
      await waitFor("the malformed record counted", () => counted.test(node!.metrics.render()));
      assert(warnings.some((l) => l.includes("not well-formed were skipped")));
    });

    await step("d's caller: its consumer route wins there", async () => {
      const r = await curlFrom(other, vip, { count: 20 });
      assertEquals(r.counts, { front: 20 });
    });

    await step("the route deleted in B: every request reaches web", async () => {
      await b.publish(eps);
      await waitFor("the default route at A", async () => {
        const r = await curlFrom(caller, vip, { count: 10 });
        return r.counts.web === 10;
      }, 120_000);
      assertEquals((await curlFrom(caller, vip, { count: 20 })).counts, { web: 20 });
      const text = node!.metrics.render();
      assert(/aether_registry_malformed_records\{kind="route"\} 0\b/.test(text));
    });
  } finally {
    await node?.close();
    await caller.remove();
    await other.remove();
    await b.stop();
    await closeEchos(echos);
    await etcd.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
