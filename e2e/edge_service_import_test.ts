/**
 * Real Envoy 1.40 and a real registry etcd: an HTTPRoute whose backendRef is a ServiceImport
 * (multicluster.x-k8s.io) is served from the clusterset registry's endpoints — this cluster's
 * first, another cluster's when this cluster has none (Envoy priorities), weighted with a local
 * Service; a cluster whose registrar dies leaves the edge's endpoints within its lease TTL + 2 s;
 * the registry stopped changes nothing served.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { MergedSource } from "../lib/engine/mod.ts";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { RegistrySource } from "../agent/registry_source.ts";
import { request } from "./http_client.ts";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  serviceFor,
  startEchos,
  startEdge,
  waitFor,
} from "./harness.ts";
import { startEtcd } from "./peers/etcd.ts";
import { endpointEntry } from "./registry_records.ts";
import type { EchoServer } from "./echo/server.ts";

const quiet = new Logger("registry", () => {}, "error");

/** The registry record of one endpoint of `default/web` in `cluster`, served by `echo`. */
const endpoint = (cluster: string, pod: string, echo: Pick<EchoServer, "hostname" | "port">) =>
  endpointEntry(cluster, "default", "web", pod, echo);

Deno.test("edge e2e: ServiceImport backends from the clusterset registry, this cluster first", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-edge-import-" });
  const etcd = await startEtcd(dir);
  const kv = new EtcdKv({ url: etcd.url, timeoutMs: 2000 });
  const writer = (cluster: string) =>
    new OriginWriter({
      kv,
      origin: { region: "eu", cluster },
      writer: cluster,
      ttlSeconds: 3,
      logger: quiet,
    });
  const a = writer("a");
  const echos = await startEchos("a1", "b1", "local");
  await a.publish(new Map([endpoint("a.eu", "a1", echos.a1)]));
  // Cluster b's registrar is a process of its own: the test SIGKILLs it.
  const b = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "e2e/registry_writer_process.ts", etcd.url, "eu", "b", "3"],
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  {
    const w = b.stdin.getWriter();
    await w.write(
      new TextEncoder().encode(
        JSON.stringify(Object.fromEntries([endpoint("b.eu", "b1", echos.b1)])),
      ),
    );
    await w.close();
    const reader = b.stdout.pipeThrough(new TextDecoderStream()).getReader();
    const first = await reader.read();
    assert(first.value?.includes("published"), `b's registrar: ${first.value}`);
    reader.releaseLock();
  }
  const port = freePort();
  const config = new MemorySource([
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    {
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceImport",
      metadata: { name: "web", namespace: "default" },
      spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 80 }] },
    },
    ...serviceFor("local", echos.local),
    httpRoute("web", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["web.example.com"],
      rules: [{
        backendRefs: [{
          group: "multicluster.x-k8s.io",
          kind: "ServiceImport",
          name: "web",
          port: 80,
        }],
      }],
    }),
    httpRoute("split", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["split.example.com"],
      rules: [{
        backendRefs: [
          {
            group: "multicluster.x-k8s.io",
            kind: "ServiceImport",
            name: "web",
            port: 80,
            weight: 1,
          },
          { name: "local", port: 8080, weight: 1 },
        ],
      }],
    }),
  ]);
  const metrics = new Registry();
  const registryLogs: string[] = [];
  const registry = new RegistrySource({
    kv,
    origin: { region: "eu", cluster: "a" },
    logger: new Logger("registry", (l) => registryLogs.push(l), "info"),
    metrics,
  });
  const edge = await startEdge([], {
    source: new MergedSource([
      { origin: "config", source: config },
      { origin: "registry", source: registry },
    ]),
  });
  const backends = async (host: string, n: number) => {
    const seen: Record<string, number> = {};
    for (let i = 0; i < n; i++) {
      const r = await request({ port, authority: host });
      const key = r.status === 200 ? String(r.json?.backend) : `HTTP ${r.status}`;
      seen[key] = (seen[key] ?? 0) + 1;
    }
    return seen;
  };
  const webEndpoints = () =>
    edge.agent.snapshots.ir?.clusters.find((c) => c.name === "web.default.svc.clusterset.local:80")
      ?.endpoints.map((e) => `${e.port}/${e.priority ?? 0}`).sort() ?? [];
  try {
    await t.step(
      "this cluster's endpoint takes the traffic; the other cluster's waits (priority 1)",
      async () => {
        await waitFor("both clusters' endpoints", () => webEndpoints().length === 2, 15_000);
        assertEquals(webEndpoints(), [`${echos.a1.port}/0`, `${echos.b1.port}/1`].sort());
        await edge.agent.waitReady(30_000);
        assertEquals(await backends("web.example.com", 20), { a1: 20 });
        const split = await backends("split.example.com", 40);
        assertEquals(Object.keys(split).sort(), ["a1", "local"], JSON.stringify(split));
      },
    );

    await t.step(
      "this cluster's pods gone: the other cluster's answer, 0 failed after the ejection",
      async () => {
        await a.publish(new Map());
        await waitFor("a's endpoint gone", () => webEndpoints().length === 1, 15_000);
        await edge.agent.waitReady(30_000);
        assertEquals(await backends("web.example.com", 30), { b1: 30 });
      },
    );

    await t.step(
      "a cluster whose registrar is SIGKILLed leaves within the lease TTL + 2 s",
      async () => {
        await a.publish(new Map([endpoint("a.eu", "a1", echos.a1)]));
        await waitFor("a back", () => webEndpoints().length === 2, 15_000);
        b.kill("SIGKILL");
        const t0 = Date.now();
        await waitFor("b's endpoint gone", () => webEndpoints().length === 1, 10_000);
        const took = Date.now() - t0;
        assert(took <= 5000, `b left after ${took} ms (TTL 3 s)`);
        assertEquals(webEndpoints(), [`${echos.a1.port}/0`]);
      },
    );

    await t.step(
      "the registry stopped 60 s under load: 0 failed requests, a warning and a gauge",
      async () => {
        await etcd.stop();
        const end = Date.now() + 60_000;
        let ok = 0, failed = 0;
        while (Date.now() < end) {
          const r = await request({ port, authority: "web.example.com" });
          if (r.status === 200 && r.json?.backend === "a1") ok++;
          else failed++;
          await new Promise((res) => setTimeout(res, 20));
        }
        assertEquals(failed, 0, `${ok} answered, ${failed} failed`);
        assert(ok > 500, `${ok} requests in 60 s`);
        assert(
          metrics.render().includes("aether_registry_up 0"),
          "the gauge says the registry is away",
        );
        assertEquals(
          registryLogs.filter((l) => l.includes("registry not answering")).length,
          1,
          "one warning",
        );
        assertEquals(webEndpoints(), [`${echos.a1.port}/0`]);
        await etcd.start();
        await waitFor(
          "registry up",
          () => metrics.render().includes("aether_registry_up 1"),
          20_000,
        );
      },
    );
  } finally {
    await edge.close();
    await a.stop();
    try {
      b.kill("SIGKILL");
    } catch { /* already gone */ }
    await b.status;
    await b.stdout.cancel().catch(() => {});
    await closeEchos(echos);
    await etcd.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
