/**
 * Endpoint churn costs the node role one ClusterLoadAssignment per changed cluster, in every
 * node: a mesh of 40 Services (each with an EndpointSlice and two producer routes) whose first
 * routes also send to one of 40 ServiceImports; a node whose set holds them all. A new
 * ClusterSetEndpoints for one import (the registry source's way of saying "this service's
 * endpoints changed") must reach the node (the import's cluster is owned by no service: the
 * services routing to it carry it in their fingerprints) and encode that import's assignment
 * alone; a new EndpointSlice, that service's alone. Without the node's memo of assignments by
 * endpoints array (kept across changes, fed by full translations too) the referring service's
 * own assignment is encoded again; with SPIRE identity, without the sink's memo of decorated
 * endpoints, too.
 */
import assert from "node:assert/strict";
import { Engine } from "../../lib/engine/mod.ts";
import {
  type KubeObject,
  NETNS_ANNOTATION,
  resolve,
  ResolveState,
} from "../../lib/gatewayapi/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { serviceObjects } from "../../testbed/fixtures/mesh_config.ts";
import { EncodeMetrics, SnapshotCache } from "../xds/cache/mod.ts";
import { TypeUrl } from "../xds/proto.ts";
import type { NodeTranslateOptions } from "../xds/translate/node/mod.ts";
import { identityScheme } from "../identity/mod.ts";
import { NodeMeshSink } from "./sink.ts";
import { NodeSnapshots, nodeSnapshots } from "./snapshots.ts";

const SERVICES = 40;
const NODE = "node-a";
const domain = "aether.internal";

/** Import `imp-<s>`'s ClusterSetEndpoints: two clusters' endpoints, `moved` replacing one. */
function endpointsOf(s: number, moved?: string): KubeObject {
  return {
    apiVersion: "aether.io/v1alpha1",
    kind: "ClusterSetEndpoints",
    metadata: { name: `imp-${s}`, namespace: "mesh" },
    spec: {
      endpoints: [
        { cluster: "a.eu", address: `10.1.0.${s}`, priority: 0 },
        { cluster: "b.eu", address: moved ?? `10.2.0.${s}`, priority: 1 },
      ].map((e) => ({ ...e, ports: [{ name: "http", protocol: "TCP", port: 8080 }] })),
    },
  };
}

/** Service `svc-<i>` (its endpoint or route edited), its first route also to import `imp-<i>`. */
function service(i: number, endpointVersion?: number, routeVersion?: number): KubeObject[] {
  const objs = serviceObjects(i, {
    ...endpointVersion ? { endpoint: i, endpointVersion } : {},
    ...routeVersion ? { route: i, routeVersion } : {},
  });
  const route = structuredClone(objs[2]);
  (route.spec as { rules: { backendRefs: unknown[] }[] }).rules[0].backendRefs.push({
    group: "multicluster.x-k8s.io",
    kind: "ServiceImport",
    name: `imp-${i}`,
    port: 80,
  });
  objs[2] = route;
  return [...objs, {
    apiVersion: "multicluster.x-k8s.io/v1beta1",
    kind: "ServiceImport",
    metadata: { name: `imp-${i}`, namespace: "mesh" },
    spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 80 }] },
  }];
}

/** A running Pod on the node (its endpoint identity is `sa`'s). */
const pod: KubeObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name: "client",
    namespace: "mesh",
    annotations: { [NETNS_ANNOTATION]: "/var/run/netns/client" },
  },
  spec: { nodeName: NODE, serviceAccountName: "client" },
  status: { phase: "Running", podIP: "10.1.0.3" },
};

async function churn(translate: NodeTranslateOptions, identity: boolean) {
  const registry = new Registry();
  const encodes = new EncodeMetrics(registry);
  const cache = new SnapshotCache();
  const snapshots = new NodeSnapshots({ cache, translate, encodeMetrics: encodes });
  const scheme = identityScheme("td.example");
  const sink = new NodeMeshSink({
    nodeName: NODE,
    snapshots,
    ...identity ? { identity: { scheme, setWanted: () => false, changed: () => {} } } : {},
  });
  const engine = new Engine({
    logger: new Logger("test", () => {}),
    metrics: registry,
    resolve: { meshDomain: domain },
    sinks: [sink],
  });
  const services = Array.from({ length: SERVICES }, (_, i) => service(i));
  const endpoints = Array.from({ length: SERVICES }, (_, s) => endpointsOf(s));
  let revision = 0;
  const apply = async () => {
    await engine.apply({
      revision: ++revision,
      objects: [...services.flat(), ...endpoints, pod],
      problems: [],
      origins: new Map(),
    });
    assert.equal(engine.status.error, undefined);
  };
  const claEncoded = () => encodes.encoded.get({ type_url: TypeUrl.endpoint });
  const served = () => cache.getSnapshot(NODE)!.resources(TypeUrl.endpoint);
  const cla = (name: string) => JSON.stringify(served().items.get(name)?.resource);
  // Resources of the other types put in a snapshot (encoded or reused): an endpoint-only
  // revision re-publishes EDS alone, without translating or re-serving the rest.
  const others = () =>
    [TypeUrl.listener, TypeUrl.route, TypeUrl.virtualHost, TypeUrl.cluster, TypeUrl.secret]
      .reduce(
        (n, type_url) => n + encodes.encoded.get({ type_url }) + encodes.reused.get({ type_url }),
        0,
      );

  await apply();
  snapshots.request(NODE, services.map((_, i) => `svc-${i}.${domain}`));
  assert.equal(served().items.size, 2 * SERVICES, "every service's and import's assignment");
  const before = served();
  const label = `${translate.capture ? "capture" : "explicit"}${identity ? ", identity" : ""}`;

  for (const [i, s] of [7, 21, 7].entries()) {
    const encoded = claEncoded(), other = others();
    endpoints[s] = endpointsOf(s, `10.250.0.${i}`);
    await apply();
    assert.equal(claEncoded() - encoded, 1, `${label}: import change ${i}: one CLA encoded`);
    assert.equal(others(), other, `${label}: import change ${i}: EDS alone`);
    assert.match(cla(`imp-${s}.mesh.svc.clusterset.local:80`), new RegExp(`"10\\.250\\.0\\.${i}"`));
  }
  for (const [i, s] of [3, 30].entries()) {
    const encoded = claEncoded();
    services[s] = service(s, i + 1);
    await apply();
    assert.equal(claEncoded() - encoded, 1, `${label}: service change ${i}: one CLA encoded`);
    assert.match(cla(`svc-${s}.${domain}`), new RegExp(`"127\\.0\\.1\\.${i + 2}"`));
  }
  const after = served();
  for (const [name, item] of after.items) {
    if (/^(imp-(7|21)\.|svc-(3|30)\.)/.test(name)) continue;
    assert.equal(item, before.items.get(name), `${label}: ${name}: the same encoded resource`);
  }
}

Deno.test("node: one import's or service's endpoints changed encodes that assignment alone", async () => {
  await churn({}, false);
  await churn({ capture: { port: 15001 } }, false);
});

Deno.test("node with identity: one endpoint change encodes that assignment alone", async () => {
  const identity = { trustDomain: "td.example" };
  await churn({ identity }, true);
  await churn({ identity, capture: { port: 15001 } }, true);
});

Deno.test("node snapshots: an import's endpoints change reaches every node holding it, one CLA", () => {
  // Without the sink's per-revision setView: the mesh change alone (the incremental paths).
  const registry = new Registry();
  const encodes = new EncodeMetrics(registry);
  const cache = new SnapshotCache();
  const snapshots = new NodeSnapshots({ cache, encodeMetrics: encodes });
  const state = new ResolveState();
  const services = Array.from({ length: SERVICES }, (_, i) => service(i));
  const endpoints = Array.from({ length: SERVICES }, (_, s) => endpointsOf(s));
  const mesh = () =>
    resolve([...services.flat(), ...endpoints], { meshDomain: domain }, state).mesh;
  snapshots.setMesh(mesh());
  const view = (n: string) => ({
    nodeId: n,
    pods: [{ namespace: "mesh", name: `p-${n}`, netnsPath: "" }],
    dependencies: services.map((_, i) => `svc-${i}.${domain}`),
  });
  for (const n of ["a", "b"]) snapshots.setView(view(n));
  const claEncoded = () => encodes.encoded.get({ type_url: TypeUrl.endpoint });
  const cla = (n: string, name: string) =>
    snapshots.resources(n)!.endpoints.find((e) => e.name === name);
  for (const [i, s] of [7, 21, 7].entries()) {
    const encoded = claEncoded();
    endpoints[s] = endpointsOf(s, `10.250.0.${i}`);
    assert.deepEqual(snapshots.setMesh(mesh()), ["a", "b"], `import change ${i}: both nodes`);
    assert.equal(claEncoded() - encoded, 1, `import change ${i}: one CLA encoded`);
    const name = `imp-${s}.mesh.svc.clusterset.local:80`;
    assert.match(JSON.stringify(cla("a", name)), new RegExp(`"10\\.250\\.0\\.${i}"`));
    assert.equal(cla("a", name), cla("b", name), "one object for both nodes");
  }
  // A route edit of the service routing to an import, with the import's endpoints changed: the
  // incremental re-translation serves the new endpoints too, as a full translation does.
  services[5] = service(5, undefined, 1);
  endpoints[5] = endpointsOf(5, "10.251.0.1");
  const now = mesh();
  snapshots.setMesh(now);
  const full = nodeSnapshots(now, ["a", "b"].map((n) => ({ view: view(n) })));
  for (const n of ["a", "b"]) {
    assert.match(JSON.stringify(cla(n, "imp-5.mesh.svc.clusterset.local:80")), /10\.251\.0\.1/);
    assert.deepEqual(snapshots.resources(n), { ...full.get(n)!, secrets: [] });
  }
});
