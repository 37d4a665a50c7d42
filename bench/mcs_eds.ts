/**
 * Issue 20's EDS leg: one endpoint changed in cluster B's registry records → cluster A's edge has
 * it in its xDS snapshot (the ClusterLoadAssignment of that import port holds the new address)
 * → A's Envoy holds it in EDS (`/config_dump?include_eds`, polled). The registry is one real etcd
 * (Debian's etcd-server, e2e/peers/etcd.ts) holding `origins` clusters × `services` exported
 * Services × `endpoints` ready endpoints (bench/mcs_fixture.ts, as bench/mcs_registry.ts), one
 * OriginWriter per origin. Cluster A's agent is the standalone edge (agent/edge), fed by a
 * MergedSource of its config (a Gateway, one ServiceImport and one HTTPRoute to its port 80 per
 * exported Service) and the RegistrySource (agent/registry_source.ts: its RegistryMirror, then
 * one ClusterSetEndpoints object per import), with a real Envoy 1.40 attached unless `none`.
 * For comparison, a bare RegistryMirror in a Worker (bench/mcs_mirror_worker.ts) times the same
 * change reaching a mirror, on a thread the agent's work cannot delay.
 *
 * Per change, also: the resources the agent encoded and the CPU this process (agent, mirror
 * worker, writers) used.
 *
 * `deno run -A bench/mcs_eds.ts [origins] [services] [endpoints] [changes] [envoy|none]`
 * (defaults 10 1000 10 60 envoy) prints progress on stderr and one JSON line on stdout.
 */
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { MergedSource } from "../lib/engine/mod.ts";
import { EtcdKv, originId, OriginWriter } from "../lib/registry/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { runStandalone, type StandaloneAgent, standaloneDefaults } from "../agent/edge/mod.ts";
import { RegistrySource } from "../agent/registry_source.ts";
import { TypeUrl } from "../agent/xds/proto.ts";
import type { Snapshot } from "../agent/xds/cache/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { freePort } from "../testbed/free_port.ts";
import { gateway, gatewayClass, httpRoute } from "../testbed/fixtures/objects.ts";
import { startEtcd } from "../e2e/peers/etcd.ts";
import {
  changed,
  clustersetOrigins,
  originMap,
  SERVICE_PORTS,
  serviceName,
  summary,
} from "./mcs_fixture.ts";

const ORIGINS = Number(Deno.args[0] ?? 10);
const SERVICES = Number(Deno.args[1] ?? 1000);
const ENDPOINTS = Number(Deno.args[2] ?? 10);
const CHANGES = Number(Deno.args[3] ?? 60);
const ENVOY = (Deno.args[4] ?? "envoy") !== "none";
const TTL_SECONDS = 30;
/** How long any one wait may take before the run fails (a busy machine is slow, not stuck). */
const PATIENCE_MS = 300_000;
const began = performance.now();

const phase = (what: string) =>
  console.error(`mcs_eds: ${what} at ${((performance.now() - began) / 1000).toFixed(1)} s`);
const now = () => performance.timeOrigin + performance.now();
const r1 = (x: number) => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** User + system CPU seconds of this process so far (Linux /proc, 100 ticks a second). */
function cpuS(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** `p`, or an error naming `what` after PATIENCE_MS. */
function patiently<T>(what: string, p: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  return Promise.race([
    p,
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what}: not in ${PATIENCE_MS} ms`)), PATIENCE_MS);
    }),
  ]).finally(() => clearTimeout(timer));
}

/** Cluster A's config: a Gateway, and per exported Service a ServiceImport and a route to it. */
function config(port: number): SourceObject[] {
  const out: SourceObject[] = [
    gatewayClass(),
    gateway("edge", [{
      name: "http",
      protocol: "HTTP",
      port,
      allowedRoutes: { namespaces: { from: "All" } },
    }]),
  ];
  for (let s = 0; s < SERVICES; s++) {
    const { namespace, name } = serviceName(s);
    out.push({
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceImport",
      metadata: { name, namespace },
      spec: {
        type: "ClusterSetIP",
        ports: SERVICE_PORTS.map(({ name, protocol, port }) => ({ name, protocol, port })),
      },
    });
    out.push(httpRoute(name, {
      parentRefs: [{ name: "edge", namespace: "default" }],
      hostnames: [`${name}.${namespace}.example.com`],
      rules: [{
        backendRefs: [{ group: "multicluster.x-k8s.io", kind: "ServiceImport", name, port: 80 }],
      }],
    }, namespace));
  }
  return out;
}

/** Whether a ClusterLoadAssignment object lists an endpoint at `ip`. */
function claHolds(resource: unknown, ip: string): boolean {
  const cla = resource as {
    endpoints?: {
      lb_endpoints?: { endpoint?: { address?: { socket_address?: { address?: string } } } }[];
    }[];
  } | undefined;
  return cla?.endpoints?.some((g) =>
    g.lb_endpoints?.some((e) => e.endpoint?.address?.socket_address?.address === ip)
  ) ?? false;
}

/** The Envoy admin's EDS dump of one cluster holds `ip` (polled until it does). */
async function envoyHolds(admin: string, cluster: string, ip: string): Promise<number> {
  const regex = `^${cluster.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`;
  const url = `http://${admin}/config_dump?include_eds&resource=dynamic_endpoint_configs` +
    `&name_regex=${encodeURIComponent(regex)}`;
  const deadline = performance.now() + PATIENCE_MS;
  while (performance.now() < deadline) {
    const text = await (await fetch(url)).text();
    if (text.includes(`"${ip}"`)) return now();
    await sleep(2);
  }
  throw new Error(`Envoy's EDS of ${cluster} never held ${ip}`);
}

/** The agent's snapshot subscription: resolves once the cluster's EDS resource holds the IP. */
function snapshotWatch(agent: StandaloneAgent, nodeId: string) {
  let armed: { cluster: string; ip: string; resolve: (at: number) => void } | undefined;
  const check = (snap: Snapshot | undefined) => {
    if (!armed || !snap) return;
    const cla = snap.resources(TypeUrl.endpoint).items.get(armed.cluster);
    if (!claHolds(cla?.resource, armed.ip)) return;
    armed.resolve(now());
    armed = undefined;
  };
  const cache = agent.snapshots.options.cache;
  const stop = cache.subscribe(nodeId, check);
  return {
    expect: (cluster: string, ip: string) =>
      new Promise<number>((resolve) => {
        armed = { cluster, ip, resolve };
        check(cache.getSnapshot(nodeId));
      }),
    stop,
  };
}

/**
 * When the agent's engine last got a revision, its xds sink began, and the sink was done (the
 * instances' methods wrapped): the time in the registry source, in resolve, in translate+encode.
 */
function timeStages(agent: StandaloneAgent) {
  const at = { engine: 0, sink: 0, sinkDone: 0 };
  const engine = agent.engine, sink = agent.snapshots;
  const apply = engine.apply.bind(engine), sinkApply = sink.apply.bind(sink);
  engine.apply = (input) => {
    at.engine = now();
    return apply(input);
  };
  sink.apply = (resolved) => {
    at.sink = now();
    sinkApply(resolved);
    at.sinkDone = now();
  };
  return { last: () => ({ ...at }) };
}

async function main(): Promise<Record<string, unknown>> {
  const origins = clustersetOrigins(ORIGINS);
  const shape = { services: SERVICES, endpoints: ENDPOINTS };
  const maps = origins.map((o, i) => originMap(o, i, shape));
  const keys = maps.reduce((n, m) => n + m.size, 0);
  const epKeysB = [...maps[1].keys()].filter((k) => k.startsWith("eps/"));
  const idB = originId(origins[1]);
  const dir = await Deno.makeTempDir({ prefix: "aether-bench-mcs-eds-" });
  const etcd = await startEtcd(dir, "bench");
  const kv = new EtcdKv({ url: etcd.url });
  const logger = new Logger("bench.mcs_eds", undefined, "warn");
  const writers = origins.map((origin) =>
    new OriginWriter({ kv, origin, writer: "registrar", ttlSeconds: TTL_SECONDS, logger })
  );
  const worker = new Worker(new URL("./mcs_mirror_worker.ts", import.meta.url), {
    type: "module",
  });
  const fromWorker = () =>
    new Promise<Record<string, number>>((resolve) =>
      worker.onmessage = (e) => resolve(e.data as Record<string, number>)
    );
  let agent: StandaloneAgent | undefined;
  let watch: ReturnType<typeof snapshotWatch> | undefined;
  try {
    phase(`etcd up; writing ${keys} keys`);
    await patiently(
      "the writers' first publish",
      Promise.all(writers.map((w, i) => w.publish(maps[i]))),
    );
    const started = fromWorker();
    worker.postMessage({ url: etcd.url });
    await patiently("the worker's mirror", started);

    phase("written; starting cluster A's edge");
    const nodeId = "bench-mcs-eds";
    const quiet = new Logger("agent", () => {}, "error");
    const registry = new RegistrySource({
      kv: new EtcdKv({ url: etcd.url }),
      origin: origins[0],
      logger: quiet,
      metrics: new Registry(),
      firstReadMs: PATIENCE_MS,
    });
    let t0 = performance.now();
    agent = await patiently(
      "the edge's start",
      runStandalone({
        ...standaloneDefaults,
        envoy: ENVOY ? "auto" : "none",
        source: new MergedSource([
          { origin: "config", source: new MemorySource(config(freePort())) },
          { origin: "registry", source: registry },
        ]),
        adminAddress: "127.0.0.1:0",
        xdsAddress: "127.0.0.1:0",
        dnsAddress: "none",
        nodeId,
        logger: quiet,
      }),
    );
    const eds = () =>
      agent!.snapshots.options.cache.getSnapshot(nodeId)?.resources(TypeUrl.endpoint);
    const full = () => {
      const items = eds()?.items;
      return items?.size === SERVICES &&
        [...items.values()].every((r) => JSON.stringify(r.resource).includes("10.101."));
    };
    while (!full()) {
      if (performance.now() - t0 > PATIENCE_MS) throw new Error("no full EDS snapshot");
      await sleep(50);
    }
    const firstSnapshotS = r1((performance.now() - t0) / 1000);
    if (ENVOY) await agent.waitReady(PATIENCE_MS);
    const readyS = r1((performance.now() - t0) / 1000);
    const envoyAdmin = agent.envoy?.adminAddress;
    if (ENVOY && !envoyAdmin) throw new Error("Envoy has no admin address");
    watch = snapshotWatch(agent, nodeId);
    const stages = timeStages(agent);

    phase(`A serves ${SERVICES} imports (Envoy ${ENVOY ? "ACKed" : "off"}); changing cluster B`);
    const current = new Map(maps[1]);
    const toMirror: number[] = [], toSnapshot: number[] = [], toEnvoy: number[] = [];
    const statsBefore = agent.snapshots.stats();
    const resolveBefore = agent.engine.resolveState.stats();
    const cpu0 = cpuS();
    t0 = performance.now();
    const inSource: number[] = [], inResolve: number[] = [], inSink: number[] = [];
    for (let i = 0; i < CHANGES; i++) {
      const c = changed(maps[1], epKeysB, i);
      current.set(c.key, c.value);
      // An import port's cluster: `<name>.<ns>.svc.clusterset.local:<port>` (lib/gatewayapi).
      const cluster = `${c.service}.${c.namespace}.svc.clusterset.local:80`;
      const mirrored = fromWorker();
      worker.postMessage({ origin: idB, key: c.key, value: c.value });
      const snapshotted = watch.expect(cluster, c.ip);
      const start = now();
      await writers[1].publish(new Map(current));
      toMirror.push((await patiently("A's mirror", mirrored)).at - start);
      toSnapshot.push(await patiently("A's snapshot", snapshotted) - start);
      const at = stages.last();
      inSource.push(at.engine - start);
      inResolve.push(at.sink - at.engine);
      inSink.push(at.sinkDone - at.sink);
      if (envoyAdmin) toEnvoy.push(await envoyHolds(envoyAdmin, cluster, c.ip) - start);
    }
    const loopS = (performance.now() - t0) / 1000;
    const cpuPerChangeMs = r1(((cpuS() - cpu0) * 1000) / CHANGES);
    const statsAfter = agent.snapshots.stats();
    const resolveAfter = agent.engine.resolveState.stats();
    const perChange = (a: Record<string, { misses: number }>, b: typeof a) =>
      Object.fromEntries(
        Object.keys(b).map((k) => [k, r1((b[k].misses - (a[k]?.misses ?? 0)) / CHANGES)]),
      );
    phase(`${CHANGES} changes in ${loopS.toFixed(1)} s`);
    return {
      origins: ORIGINS,
      services: SERVICES,
      endpoints: ENDPOINTS,
      keys,
      changes: CHANGES,
      envoy: ENVOY,
      firstSnapshotS,
      readyS,
      toMirror: summary(toMirror),
      toSnapshot: summary(toSnapshot),
      ...(toEnvoy.length ? { toEnvoy: summary(toEnvoy) } : {}),
      stages: {
        sourceMs: summary(inSource),
        resolveMs: summary(inResolve),
        sinkMs: summary(inSink),
      },
      cpuPerChangeMs,
      sinkMissesPerChange: perChange(statsBefore, statsAfter),
      resolveMissesPerChange: perChange(resolveBefore, resolveAfter),
      agentRssMiB: Math.round(Deno.memoryUsage().rss / 2 ** 20),
    };
  } finally {
    watch?.stop();
    worker.postMessage({ stop: true });
    await agent?.close().catch(() => {});
    await Promise.all(writers.map((w) => w.stop().catch(() => {})));
    await etcd.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

console.log(JSON.stringify(await main()));
phase("done, etcd stopped");
