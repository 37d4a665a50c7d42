import assert from "node:assert/strict";
import type { MeshIR } from "../../lib/ir/mod.ts";
import { TypeUrl } from "../xds/proto.ts";
import { captureRouteName } from "../xds/translate/node/mod.ts";
import { nodeGoldenCases } from "../xds/translate/node/_test_utils.ts";
import { NodeSnapshots } from "./snapshots.ts";

const capture = nodeGoldenCases().find((c) => c.name === "capture")!;
const REDIS = "redis.aether.internal";
const V1 = "echo-v1.aether.internal";

/** The capture mesh with echo-v1 (outside node-1's set) given a producer route. */
function withEchoV1Route(mesh: MeshIR): MeshIR {
  const m = structuredClone(mesh);
  m.services.find((s) => s.authority === V1)!.ports[0].producerRoutes = [{
    name: "HTTPRoute/mesh/v1/rule/0/match/0",
    match: { path: { type: "PathPrefix", value: "/v1" }, headers: [], queryParams: [] },
    action: { kind: "forward", backends: [{ cluster: V1, weight: 1 }], mirrors: [] },
  }];
  return m;
}

function snapshots(withCapture: boolean): NodeSnapshots {
  const ns = new NodeSnapshots({ translate: withCapture ? capture.options : {} });
  ns.setMesh(capture.mesh);
  // Only redis is in the set: echo-v1 is outside it.
  ns.setView({ ...capture.view, dependencies: [REDIS] });
  return ns;
}

const routeNames = (r: { routes: { name: string }[] } | undefined) => r?.routes.map((x) => x.name);

Deno.test("capture: a route change outside a node's set re-translates the node", () => {
  const ns = snapshots(true);
  const table = captureRouteName("b", V1);
  const was = ns.resources("node-1")!;
  const before = was.routes.find((r) => r.name === table)!;
  assert.deepEqual(ns.setMesh(withEchoV1Route(capture.mesh)), ["node-1"]);
  const now = ns.resources("node-1")!;
  const after = now.routes.find((r) => r.name === table)!;
  assert.notDeepEqual(after, before, "its capture route table follows the new route");
  // What did not change is the very same object (the snapshot does not encode it again).
  assert.equal(now.listeners.length, was.listeners.length);
  now.listeners.forEach((l, i) => assert.equal(l, was.listeners[i], l.name));
  // Only echo-v1's table of each caller (a and b) is new.
  assert.deepEqual(now.routes.filter((r, i) => r !== was.routes[i]).map((r) => r.name), [
    captureRouteName("a", V1),
    table,
  ]);
  // Clusters stay demand-scoped: the set did not grow.
  assert.deepEqual(ns.resources("node-1")!.clusters.map((c) => c.name), [
    "capture-passthrough",
    REDIS,
  ]);
  // Without capture the node does not hold echo-v1 at all: nothing to re-translate.
  const plain = snapshots(false);
  assert.deepEqual(plain.setMesh(withEchoV1Route(capture.mesh)), []);
  assert.ok(!routeNames(plain.resources("node-1"))!.some((n) => n.startsWith("capture.")));
});

Deno.test("capture: on-demand CDS from a capture chain grows the node's set", () => {
  const ns = snapshots(true);
  ns.onDemand("node-1", TypeUrl.cluster, [V1]);
  assert.deepEqual(ns.dependencies("node-1"), [V1, REDIS]);
  assert.ok(ns.resources("node-1")!.clusters.some((c) => c.name === V1));
});

Deno.test("capture: a UDP backend's endpoints reach a node that never named it (its UDP clusters are warm)", () => {
  const udp = nodeGoldenCases().find((c) => c.name === "capture_udp_route")!;
  const ns = new NodeSnapshots({ translate: udp.options });
  ns.setMesh(udp.mesh);
  ns.setView(udp.view);
  const merged = "aether.udp/dns.aether.internal:53/udp#producer";
  const V2 = "dns-v2.aether.internal";
  const eds = (name: string) =>
    JSON.stringify(ns.resources("node-1")!.endpoints.find((e) => e.name === name));
  assert.ok(eds(merged).includes("10.0.5.20") && eds(V2).includes("10.0.5.30"));
  // dns-v2 moves to a new pod: its cluster and the merged one change endpoints only.
  const moved = structuredClone(udp.mesh);
  for (const c of moved.clusters) {
    for (const e of c.endpoints) if (e.address === "10.0.5.30") e.address = "10.0.5.31";
  }
  assert.deepEqual(ns.setMesh(moved), ["node-1"]);
  assert.ok(eds(V2).includes("10.0.5.31") && !eds(V2).includes("10.0.5.30"));
  assert.ok(eds(merged).includes("10.0.5.31") && !eds(merged).includes("10.0.5.30"));
});
