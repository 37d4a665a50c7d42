/**
 * GAMMA push benchmark: `services` mesh services with 2 producer routes each, `nodes` simulated
 * node proxies (delta ADS clients over gRPC, ACKing every response) each holding a
 * `setSize`-service dependency set. Measures, from the config change to the last affected proxy
 * receiving it: (1) a producer-route edit, which must arrive as one VirtualHost (VHDS) only,
 * (2) an endpoint change, which must arrive as EDS only. Prints one JSON line.
 *
 * deno run -A bench/mesh_push.ts [services=1000] [nodes=100] [setSize=20] [changes=50]
 */
import { resolve, ResolveState } from "../lib/gatewayapi/mod.ts";
import type { KubeObject } from "../lib/gatewayapi/mod.ts";
import { lcg } from "../testbed/fixtures/lcg.ts";
import { type Edit, serviceObjects } from "../testbed/fixtures/mesh_config.ts";
import { TypeUrl } from "../agent/xds/proto.ts";
import { adsClient, nodeStream, type Received, startMeshXds } from "./mesh_ads.ts";

const [services, nodes, setSize, changes] = [1000, 100, 20, 50].map((d, i) =>
  Number(Deno.args[i] ?? d)
);
const domain = "aether.internal";

// Like a watch source, a change delivers new objects only for what changed; the rest are the
// same objects as before (resolve memoizes admission and conversion per object).
const base: KubeObject[][] = Array.from({ length: services }, (_, i) => serviceObjects(i, {}));
function objects(edit: Edit): KubeObject[] {
  const changed = edit.route ?? edit.endpoint;
  return base.flatMap((objs, i) => (i === changed ? serviceObjects(i, edit) : objs));
}

// The control plane: resolve (with its own state) → NodeSnapshots → cache → XdsServer.
const state = new ResolveState();
const { snapshots, server, port } = await startMeshXds();
const t0 = performance.now();
snapshots.setMesh(resolve(objects({}), { meshDomain: domain }, state).mesh);
const sets: string[][] = [];
for (let n = 0; n < nodes; n++) {
  const rnd = lcg(n + 7);
  const deps = new Set<string>();
  while (deps.size < setSize) deps.add(`svc-${Math.floor(rnd() * services)}.${domain}`);
  sets.push([...deps].sort());
  snapshots.setView({
    nodeId: `node-${n}`,
    pods: [{ namespace: `ns-${n}`, name: "p", netnsPath: "" }],
    dependencies: sets[n],
  });
}
const setupMs = performance.now() - t0;

// Simulated node proxies.
const client = adsClient(port);
const received: Received[][] = [];
const streams = [];
for (let n = 0; n < nodes; n++) {
  const log: Received[] = [];
  received.push(log);
  streams.push(nodeStream(client, n, log));
}
const warm = async (what: string, check: () => boolean, ms = 60000) => {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
};
await warm(
  "every proxy warm",
  () =>
    received.every((l) =>
      [TypeUrl.cluster, TypeUrl.endpoint, TypeUrl.listener, TypeUrl.route].every((t) =>
        l.some((r) => r.type === t)
      )
    ),
);
await new Promise((r) => setTimeout(r, 500));

async function measure(
  kind: "route" | "endpoint",
  i: number,
): Promise<{ ms: number; resolveMs: number; affected: number; others: number }> {
  const svc = Math.floor(lcg(i + 1000)() * services);
  const authority = `svc-${svc}.${domain}`;
  const affected = sets.map((s, n) => (s.includes(authority) ? n : -1)).filter((n) => n >= 0);
  if (affected.length === 0) return measure(kind, i + changes);
  const start = performance.now();
  const marks = received.map((l) => l.length);
  const objs = objects(
    kind === "route"
      ? { route: svc, routeVersion: i + 1 }
      : { endpoint: svc, endpointVersion: i + 1 },
  );
  const r0 = performance.now();
  const mesh = resolve(objs, { meshDomain: domain }, state).mesh;
  const resolveMs = performance.now() - r0;
  snapshots.setMesh(mesh);
  // A route edit reaches a node proxy as one VirtualHost (VHDS); an endpoint change as EDS only.
  const want = kind === "route" ? TypeUrl.virtualHost : TypeUrl.endpoint;
  await warm(
    `${kind} change ${i}`,
    () => affected.every((n) => received[n].slice(marks[n]).some((r) => r.type === want)),
    10000,
  );
  const done = Math.max(
    ...affected.map((n) => received[n].slice(marks[n]).find((r) => r.type === want)!.at),
  );
  await new Promise((r) => setTimeout(r, 30));
  // Every response after the change, on every proxy, that is not the expected type.
  const others = received.reduce(
    (sum, l, n) => sum + l.slice(marks[n]).filter((r) => r.type !== want).length,
    0,
  );
  // Reset the snapshot to the base so the next change starts from the same state.
  snapshots.setMesh(resolve(objects({}), { meshDomain: domain }, state).mesh);
  await new Promise((r) => setTimeout(r, 30));
  return { ms: done - start, resolveMs, affected: affected.length, others };
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const result: Record<string, unknown> = {
  services,
  routes: services * 2,
  nodes,
  setSize,
  changes,
  setupMs: Math.round(setupMs),
};
for (const kind of ["route", "endpoint"] as const) {
  const samples = [];
  for (let i = 0; i < changes; i++) samples.push(await measure(kind, i));
  const ms = samples.map((s) => s.ms), res = samples.map((s) => s.resolveMs);
  result[kind] = {
    p50Ms: +pct(ms, 50).toFixed(1),
    p99Ms: +pct(ms, 99).toFixed(1),
    resolveP50Ms: +pct(res, 50).toFixed(1),
    affectedAvg: +(samples.reduce((a, s) => a + s.affected, 0) / samples.length).toFixed(1),
    otherTypeResponses: samples.reduce((a, s) => a + s.others, 0),
  };
}
for (const s of streams) s.end();
client.close();
await server.close();
console.log(JSON.stringify(result));
Deno.exit(0);
