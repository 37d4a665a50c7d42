/**
 * The agent side of bench/xds_fanout.ts, in its own process so its RSS and CPU are its own:
 * resolve → NodeSnapshots → snapshot cache → XdsServer (delta ADS over gRPC), `nodes` node views
 * whose dependency sets all hold svc-0 plus `setSize - 1` random services. Prints
 * `{"port":…,"setupMs":…}`, then applies one JSON command per stdin line —
 * `{"route":i,"v":n}` or `{"endpoint":i,"v":n}` — and answers `{"resolveMs":…,"applyMs":…}`.
 *
 *   deno run -A bench/xds_fanout_server.ts <services> <nodes> <setSize>
 * @module
 */
import process from "node:process";
import readline from "node:readline";
import { resolve } from "../lib/gatewayapi/mod.ts";
import type { KubeObject } from "../lib/gatewayapi/mod.ts";
import { startMeshXds } from "./mesh_ads.ts";
import { type Edit, serviceObjects } from "../testbed/fixtures/mesh_config.ts";
import { fanoutSets } from "./xds_fanout_sets.ts";

const [services, nodes, setSize] = [1000, 1000, 20].map((d, i) => Number(Deno.args[i] ?? d));
const domain = "aether.internal";
const base: KubeObject[][] = Array.from({ length: services }, (_, i) => serviceObjects(i, {}));
// Edits accumulate per service (a route edit then an endpoint change keeps the route edit).
const edits = new Map<number, Edit>();
const objects = () =>
  base.flatMap((objs, i) => (edits.has(i) ? serviceObjects(i, edits.get(i)!) : objs));

const { snapshots, server, port } = await startMeshXds();
const t0 = performance.now();
snapshots.setMesh(resolve(objects(), { meshDomain: domain }).mesh);
fanoutSets(services, nodes, setSize).forEach((dependencies, n) =>
  snapshots.setView({
    nodeId: `node-${n}`,
    pods: [{ namespace: `ns-${n}`, name: "p", netnsPath: "" }],
    dependencies,
  })
);
console.log(JSON.stringify({ port, setupMs: Math.round(performance.now() - t0) }));

for await (const line of readline.createInterface({ input: process.stdin })) {
  if (!line.trim()) continue;
  const cmd = JSON.parse(line) as { route?: number; endpoint?: number; v: number };
  const a = performance.now();
  const i = (cmd.route ?? cmd.endpoint)!;
  edits.set(i, {
    ...edits.get(i),
    ...(cmd.route !== undefined
      ? { route: i, routeVersion: cmd.v }
      : { endpoint: i, endpointVersion: cmd.v }),
  });
  const mesh = resolve(objects(), { meshDomain: domain }).mesh;
  const b = performance.now();
  snapshots.setMesh(mesh);
  console.log(JSON.stringify({ resolveMs: b - a, applyMs: performance.now() - b }));
}
await server.close();
