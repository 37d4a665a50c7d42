import assert from "node:assert/strict";
import type { MeshIR, NodeView } from "../../lib/ir/mod.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { TypeUrl } from "../xds/proto.ts";
import { nodeGoldenCases } from "../xds/translate/node/_test_utils.ts";
import { dependencyClosure, indexMesh, requestedAuthority } from "./demand.ts";
import { NodeSnapshots, nodeSnapshots } from "./snapshots.ts";

const demo = nodeGoldenCases().find((c) => c.name === "demo")!;
const S1 = "svc-1.aether.internal";
const S1V2 = "svc-1-v2.aether.internal";
const S2 = "svc-2.aether.internal";
const S3 = "svc-3.aether.internal";

function view(nodeId: string, namespace: string, dependencies: string[]): NodeView {
  return {
    nodeId,
    pods: [{ namespace, name: `p-${nodeId}`, netnsPath: `/var/run/netns/${nodeId}` }],
    dependencies,
  };
}

const clusterNames = (r: { clusters: { name: string }[] } | undefined) =>
  r?.clusters.map((c) => c.name);

Deno.test("dependency closure follows the routes the node's namespaces see", () => {
  const index = indexMesh(demo.mesh);
  assert.deepEqual(dependencyClosure(index, [S1], ["b"]), [S1V2, S1]);
  // Namespace a's consumer route also sends /admin to svc-2.
  assert.deepEqual(dependencyClosure(index, [S1], ["a"]), [S1V2, S1, S2]);
  assert.deepEqual(dependencyClosure(index, ["nope.aether.internal"], ["a"]), []);
  assert.equal(requestedAuthority(index, `${S2}:8080`), S2);
  assert.equal(requestedAuthority(index, `${S3}:80`), S3);
  assert.equal(requestedAuthority(index, S3), S3);
});

Deno.test("nodeSnapshots: each node holds only its dependency set", () => {
  const out = nodeSnapshots(demo.mesh, [
    { view: view("n-a", "a", [S1]) },
    { view: view("n-b", "b", [S3]), requested: [`${S2}:8080`] },
  ]);
  assert.deepEqual(clusterNames(out.get("n-a")), [S1V2, S1, S2, `${S2}:8080`]);
  assert.deepEqual(clusterNames(out.get("n-b")), [S2, `${S2}:8080`, S3]);
});

/** The demo mesh with svc-3 given a producer route to svc-1-v2. */
function withSvc3Route(mesh: MeshIR): MeshIR {
  const m = structuredClone(mesh);
  const svc3 = m.services.find((s) => s.authority === S3)!;
  svc3.ports[0].producerRoutes = [{
    name: "HTTPRoute/prod/s3/rule/0/match/0",
    match: { path: { type: "PathPrefix", value: "/v2" }, headers: [], queryParams: [] },
    action: { kind: "forward", backends: [{ cluster: S1V2, weight: 1 }], mirrors: [] },
  }];
  return m;
}

Deno.test("NodeSnapshots: a producer route change reaches only the nodes whose set holds the service", () => {
  const cache = new SnapshotCache();
  const ns = new NodeSnapshots({ cache });
  ns.setMesh(demo.mesh);
  ns.setView(view("n-a", "a", [S1]));
  ns.setView(view("n-3", "b", [S3]));
  const pushes: string[] = [];
  cache.subscribe("n-a", () => pushes.push("n-a"));
  cache.subscribe("n-3", () => pushes.push("n-3"));
  assert.deepEqual(ns.dependencies("n-3"), [S3]);

  const before = cache.getSnapshot("n-a")!;
  assert.deepEqual(ns.setMesh(withSvc3Route(demo.mesh)), ["n-3"]);
  assert.deepEqual(pushes, ["n-3"]);
  assert.equal(cache.getSnapshot("n-a"), before, "n-a's set lacks svc-3: untouched");
  // Only svc-3's virtual host changed on n-3 (RDS does not change with routes).
  const vh = ns.resources("n-3")!.virtualHosts.find((v) => v.name === `outbound.b/${S3}`)!;
  assert.equal((vh.resource.routes as unknown[]).length, 2, "the route, then 404");
  // The route's backend outside the set extends it.
  assert.deepEqual(ns.dependencies("n-3"), [S1V2, S3]);
  assert.deepEqual(clusterNames(ns.resources("n-3")), [S1V2, S3]);

  // Setting the same mesh again recomputes nothing and pushes nothing.
  assert.deepEqual(ns.setMesh(withSvc3Route(demo.mesh)), []);
  assert.deepEqual(pushes, ["n-3"]);
});

Deno.test("NodeSnapshots: an endpoint change is EDS only; a service added later serves an old request", () => {
  const cache = new SnapshotCache();
  const ns = new NodeSnapshots({ cache });
  ns.setMesh(demo.mesh);
  ns.setView(view("n-b", "b", [S1]));
  const before = cache.getSnapshot("n-b")!;
  const moved = structuredClone(demo.mesh);
  moved.clusters.find((c) => c.name === S1V2)!.endpoints = [{ address: "10.0.9.9", port: 80 }];
  assert.deepEqual(ns.setMesh(moved), ["n-b"]);
  const after = cache.getSnapshot("n-b")!;
  for (const t of [TypeUrl.listener, TypeUrl.route, TypeUrl.cluster]) {
    assert.equal(after.typeVersion(t), before.typeVersion(t), t);
  }
  assert.notEqual(after.typeVersion(TypeUrl.endpoint), before.typeVersion(TypeUrl.endpoint));

  // A request for a service that does not exist yet changes nothing…
  assert.equal(ns.request("n-b", ["new.aether.internal"]), false);
  assert.equal(ns.request("n-b", [S3]), true);
  assert.equal(ns.request("n-b", [S3]), false, "asked twice: nothing new");
  assert.equal(ns.request("unknown-node", [S3]), false);
  // …until the service appears.
  const grown = structuredClone(moved);
  grown.services.push({
    ...structuredClone(grown.services.find((s) => s.authority === S3)!),
    authority: "new.aether.internal",
    name: "new",
  });
  grown.services[grown.services.length - 1].ports[0].cluster = "new.aether.internal";
  grown.clusters.push({
    ...grown.clusters.find((c) => c.name === S3)!,
    name: "new.aether.internal",
  });
  assert.deepEqual(ns.setMesh(grown), ["n-b"]);
  assert.ok(clusterNames(ns.resources("n-b"))!.includes("new.aether.internal"));
});

Deno.test("NodeSnapshots.onDemand: VHDS aliases (and CDS names) grow the set", () => {
  const ns = new NodeSnapshots();
  ns.setMesh(demo.mesh);
  ns.setView(view("n-b", "b", []));
  const vhosts = () => ns.resources("n-b")?.virtualHosts.map((v) => v.name);
  assert.deepEqual(clusterNames(ns.resources("n-b")), []);
  ns.onDemand("n-b", TypeUrl.endpoint, [S3]);
  ns.onDemand("n-b", TypeUrl.virtualHost, ["outbound.b", "outbound.b/NOPE.aether.internal"]);
  assert.deepEqual(clusterNames(ns.resources("n-b")), []);
  // The Host keeps its port and its case; both name svc-3.
  ns.onDemand("n-b", TypeUrl.virtualHost, [`outbound.b/${S3.toUpperCase()}:80`]);
  assert.deepEqual(clusterNames(ns.resources("n-b")), [S3]);
  assert.deepEqual(vhosts(), [`outbound.b/${S3}`]);
  ns.onDemand("n-b", TypeUrl.cluster, [`${S2}:8080`]);
  assert.deepEqual(clusterNames(ns.resources("n-b")), [S2, `${S2}:8080`, S3]);
  ns.removeNode("n-b");
  assert.equal(ns.resources("n-b"), undefined);
});

Deno.test("NodeSnapshots: an identity losing its SVID loses its listeners and clusters; a rotation changes the secrets only", () => {
  const c = nodeGoldenCases().find((x) => x.name === "identity")!;
  const [client, b] = ["spiffe://td.test/ns/a/sa/client", "spiffe://td.test/ns/b/sa/b"];
  const identity = { ...c.options!.identity!, certified: [] };
  const ns = new NodeSnapshots({ translate: { ...c.options, identity } });
  ns.setMesh(c.mesh);
  ns.setView(c.view);
  const names = (list?: { name: string }[]) => list?.map((x) => x.name) ?? [];
  const r = () => ns.resources(c.view.nodeId)!;
  // Before any SVID: no inbound listener, every caller cluster refuses.
  assert.deepEqual(names(r().listeners), ["outbound|a/client-0", "outbound|b/b-0"]);
  assert.ok(r().clusters.every((x) => x.resource.type === 0), "every cluster refuses");
  const secret = (id: string, v: string) => ({ name: id, resource: { name: id, v } });
  ns.setSecrets([secret(client, "1"), secret(b, "1")], [client, b]);
  const both = r();
  assert.ok(names(both.listeners).includes("inbound|b/b-0"), "b serves once it has its SVID");
  assert.ok(both.clusters.every((x) => x.resource.type !== 0 || x.name.startsWith("inbound|")));
  // A rotation: the same identities, new secrets; nothing else is translated again.
  ns.setSecrets([secret(client, "2"), secret(b, "2")], [b, client]);
  assert.equal(r().listeners, both.listeners);
  assert.equal(r().clusters, both.clusters);
  assert.notEqual(r().secrets, both.secrets);
  // b's SVID is gone: b's inbound listeners go, its caller clusters refuse; a/client's stay.
  ns.setSecrets([secret(client, "2")], [client]);
  assert.ok(!names(r().listeners).some((n) => n.startsWith("inbound")), "b serves nothing");
  const byName = new Map(r().clusters.map((x) => [x.name, x.resource]));
  assert.equal(byName.get("b.aether.internal|b/b")?.type, 0, "b's clusters refuse");
  assert.equal(byName.get("b.aether.internal|a/client")?.type, 3, "a/client's still dial (EDS)");
});

Deno.test("NodeSnapshots with identity: each caller gets mTLS clusters only for what it asked for", () => {
  const c = nodeGoldenCases().find((x) => x.name === "identity")!;
  const ns = new NodeSnapshots({ translate: c.options });
  ns.setMesh(c.mesh);
  ns.setView({ ...c.view, dependencies: [] });
  const node = c.view.nodeId;
  const callerClusters = () =>
    ns.resources(node)!.clusters.map((x) => x.name).filter((n) =>
      n.includes("|") && !n.startsWith("inbound|")
    );
  assert.deepEqual(callerClusters(), [], "no seeds, no requests: no caller cluster");
  // a/client's on-demand CDS request (its capture or explicit lane's route named it).
  ns.onDemand(node, TypeUrl.cluster, ["b.aether.internal|a/client"]);
  assert.deepEqual(callerClusters(), ["b.aether.internal|a/client"], "not b/b's as well");
  // The same service asked for by b/b next: its own cluster appears (not already "requested").
  ns.onDemand(node, TypeUrl.cluster, ["b.aether.internal|b/b"]);
  assert.deepEqual(callerClusters(), ["b.aether.internal|a/client", "b.aether.internal|b/b"]);
  // b/b's explicit lane asks for c's virtual host (VHDS alias `outbound.b/b/<host>`).
  ns.onDemand(node, TypeUrl.virtualHost, ["outbound.b/b/c.aether.internal:8080"]);
  assert.deepEqual(callerClusters(), [
    "b.aether.internal|a/client",
    "b.aether.internal|b/b",
    "c.aether.internal|b/b",
  ]);
  assert.deepEqual(ns.dependencies(node), ["b.aether.internal", "c.aether.internal"]);
  // The explicit lane fetches a missing caller cluster on demand (on-demand CDS).
  const outbound = ns.resources(node)!.listeners.find((l) => l.name === "outbound|a/client-0")!;
  assert.match(JSON.stringify(outbound.resource), /"odcds":\{"source":\{"ads"/);
});

Deno.test("NodeSnapshots with identity: a pod whose IP joins a Service's endpoints late gets its inbound listener", () => {
  const c = nodeGoldenCases().find((x) => x.name === "capture_identity")!;
  const unready = structuredClone(c.mesh);
  unready.clusters.find((x) => x.name === "redis.aether.internal")!.endpoints = [];
  const listeners = () => ns.resources(c.view.nodeId)!.listeners.map((l) => l.name);
  const ns = new NodeSnapshots({ translate: c.options });
  ns.setMesh(unready);
  // The node watches nothing: no seed, no request (the Service's change is endpoints only).
  ns.setView({ ...c.view, dependencies: [] });
  assert.ok(!listeners().includes("inbound|b/redis-0"), "not Ready: no inbound listener");
  // redis-0 becomes Ready: only endpoints changed, in a service the node does not watch.
  assert.deepEqual(ns.setMesh(c.mesh), [c.view.nodeId]);
  assert.ok(listeners().includes("inbound|b/redis-0"), "Ready: its inbound listener");
  // (Its Envoy advertised no internal listeners: NodeSnapshots translates without them.)
  const options = { ...c.options, internalListeners: false };
  const full = nodeSnapshots(c.mesh, [{ view: { ...c.view, dependencies: [] } }], options);
  assert.deepEqual(ns.resources(c.view.nodeId), full.get(c.view.nodeId), "as a full translation");
  // Another endpoint change that moves none of the node's pods leaves its listeners alone.
  const before = ns.resources(c.view.nodeId)!.listeners;
  const other = structuredClone(c.mesh);
  other.clusters.find((x) => x.name === "redis.aether.internal")!.endpoints.push({
    address: "10.0.7.7",
    port: 6379,
    identity: "spiffe://td.test/ns/b/sa/redis",
  });
  ns.setMesh(other);
  assert.equal(ns.resources(c.view.nodeId)!.listeners, before);
  // Unready again: the listener goes.
  ns.setMesh(unready);
  assert.ok(!listeners().includes("inbound|b/redis-0"));
});
