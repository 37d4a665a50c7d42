/**
 * At 10,000 HTTPRoutes, an edit costs the edge one route's work: the edge pipeline (the engine's
 * resolve, then translate, ResourceReuse and the snapshot's encodings) translates and encodes
 * only the resources the edit touched, counted by `aether_xds_resources_encoded_total` and the
 * memos' misses. Without the reuse or the remembered encodings every VirtualHost is encoded again
 * and these tests fail; without the positional walks (translate's virtual hosts by identity,
 * ResourceReuse by position, lists encoded in place) the unchanged 9,999 are looked up again. (Resolve's misses are asserted: an edit takes its edit path, which redoes
 * the edited route alone; other revisions look every route up, its memos hit for the unchanged.)
 */
import assert from "node:assert/strict";
import { Engine } from "../../lib/engine/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import type { MemoStats } from "../../lib/memo/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { gateway, gatewayClass, httpRoute } from "../../testbed/fixtures/objects.ts";
import { EncodeMetrics, SnapshotCache } from "./cache/mod.ts";
import { EdgeSnapshots } from "./edge_snapshots.ts";
import { TypeUrl } from "./proto.ts";

const ROUTES = 10_000;
const SERVICES = 100;
/** The route with more rules than the chunked encoder encodes in one piece (proto.ts CHUNK_AT). */
const WIDE_RULES = 10;
/** The edge listener's RouteConfiguration: VHDS names are `<it>/<host>`. */
const ROUTE_CONFIG = "http.10080";

function service(name: string, octet: number): KubeObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "default" },
      spec: { clusterIP: `10.96.0.${octet}`, ports: [{ name: "http", port: 8080 }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace: "default", labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "http", port: 9000 }],
      endpoints: [{ addresses: [`10.1.0.${octet}`] }, { addresses: [`10.2.0.${octet}`] }],
    },
  ];
}

const setHeader = (value: string) => ({
  type: "RequestHeaderModifier",
  requestHeaderModifier: { set: [{ name: "x-edit", value }] },
});

/**
 * HTTPRoute `route-<i>` for host `app-<i>.example.com`, to `backends` (default: two of the
 * Services, by `i`); route 0 has {@link WIDE_RULES} rules, the others one. `edit` changes the
 * header value of one rule (the wide route's fourth).
 */
function route(i: number, edit = 0, backends?: string[]): KubeObject {
  const to = (backends ?? [`svc-${i % SERVICES}`, `svc-${(i + 1) % SERVICES}`])
    .map((name) => ({ name, port: 8080 }));
  const rules = i === 0
    ? Array.from({ length: WIDE_RULES }, (_, r) => ({
      matches: [{ path: { type: "PathPrefix", value: `/r${r}` } }],
      filters: [setHeader(r === 3 ? `e${edit}` : "e0")],
      backendRefs: to,
    }))
    : [{ filters: [setHeader(`e${edit}`)], backendRefs: to }];
  const r = httpRoute(`route-${i}`, {
    parentRefs: [{ name: "edge" }],
    hostnames: [`app-${i}.example.com`],
    rules,
  });
  return { ...r, metadata: { ...r.metadata, generation: 1 + edit } };
}

function config(): KubeObject[] {
  const out = [gatewayClass(), gateway("edge", [{ name: "http", protocol: "HTTP", port: 10080 }])];
  for (let s = 0; s < SERVICES; s++) out.push(...service(`svc-${s}`, s + 1));
  for (let i = 0; i < ROUTES; i++) out.push(route(i));
  return out;
}

const kinds = {
  Listener: TypeUrl.listener,
  RouteConfiguration: TypeUrl.route,
  VirtualHost: TypeUrl.virtualHost,
  Cluster: TypeUrl.cluster,
  ClusterLoadAssignment: TypeUrl.endpoint,
  Secret: TypeUrl.secret,
};

/** Per stat, the misses since `before`. */
function missesSince(
  before: Record<string, MemoStats>,
  after: Record<string, MemoStats>,
): Record<string, number> {
  return Object.fromEntries(
    Object.entries(after).map(([k, v]) => [k, v.misses - (before[k]?.misses ?? 0)]),
  );
}

/** Resources encoded per type when a change touches none of them. */
const NOTHING = {
  Listener: 0,
  RouteConfiguration: 0,
  VirtualHost: 0,
  Cluster: 0,
  ClusterLoadAssignment: 0,
  Secret: 0,
};

Deno.test("edge at 10k routes: an edit, an added route and a removed one encode only what they touch", async (t) => {
  const registry = new Registry();
  // The sink's own counters: a registry gives one counter per name.
  const encodes = new EncodeMetrics(registry);
  const cache = new SnapshotCache();
  const snapshots = new EdgeSnapshots({ cache, metrics: registry });
  const engine = new Engine({
    logger: new Logger("test", () => {}),
    metrics: registry,
    sinks: [snapshots],
  });
  let revision = 0;
  let objects = config();
  const apply = async (next: KubeObject[]) => {
    objects = next;
    await engine.apply({ revision: ++revision, objects, problems: [], origins: new Map() });
    assert.equal(engine.status.error, undefined);
    assert.deepEqual(engine.status.problems, []);
  };
  const encoded = () =>
    Object.fromEntries(
      Object.entries(kinds).map(([k, url]) => [k, encodes.encoded.get({ type_url: url })]),
    );
  /** Applies `next`; returns the resources encoded, the sink's and resolve's memo misses. */
  const step = async (next: KubeObject[]) => {
    const counts = encoded(), sink = snapshots.stats(), resolve = engine.resolveState.stats();
    await apply(next);
    const now = encoded();
    return {
      encoded: Object.fromEntries(Object.entries(now).map(([k, v]) => [k, v - counts[k]])),
      sink: missesSince(sink, snapshots.stats()),
      resolve: missesSince(resolve, engine.resolveState.stats()),
    };
  };
  const served = () => cache.getDefaultSnapshot()!;
  const versions = () =>
    Object.fromEntries(Object.entries(kinds).map(([k, url]) => [k, served().typeVersion(url)]));
  const routeAt = (name: string) => objects.findIndex((o) => o.metadata.name === name);

  await apply(objects);
  assert.equal(served().resources(TypeUrl.virtualHost).items.size, ROUTES);
  assert.deepEqual(encoded(), {
    Listener: 1,
    RouteConfiguration: 1,
    VirtualHost: ROUTES,
    Cluster: SERVICES,
    ClusterLoadAssignment: SERVICES,
    Secret: 0,
  });
  const shown = registry.render();
  assert.match(shown, /^aether_xds_resources_encoded_total\{type_url=".*\.VirtualHost"\} 10000$/m);
  assert.match(shown, /^aether_xds_resources_reused_total\{type_url=".*\.VirtualHost"\} 0$/m);

  await t.step("one route's header value: one VirtualHost, one route of it", async () => {
    const before = versions();
    const { encoded, sink, resolve } = await step(objects.with(routeAt("route-0"), route(0, 1)));
    assert.deepEqual(encoded, { ...NOTHING, VirtualHost: 1 });
    // The wide virtual host is encoded route by route: only the edited route's chunk is new.
    // Every other virtual host is the same IR object at the same position: not looked up, its
    // resource reused at its position and every list encoded in place over the last.
    assert.deepEqual(sink, {
      translatePositions: 1,
      translateVhds: 1,
      translateVirtualHosts: 1,
      translateServed: 1,
      translateClusters: 0,
      translateEndpoints: 0,
      encodeResources: 1,
      encodeElements: 1,
      encodeLists: 0,
      reusePositions: 0,
    });
    for (const memo of ["admit", "convertEdge", "vhosts", "statuses"]) {
      assert.equal(resolve[memo], 1, `resolve's ${memo} memo: the edited route alone`);
    }
    // Resolve's edit path keeps the route's attachment (same parentRefs and hostnames).
    assert.equal(resolve.attach, 0, "resolve's attach memo: not asked (the edit path)");
    assert.equal(resolve.endpoints, 0, "no Service's endpoints looked up again");
    const after = versions();
    assert.deepEqual(
      Object.keys(after).filter((k) => after[k] !== before[k]),
      ["VirtualHost"],
      "only the VirtualHost type's version moves",
    );
    const vh = served().resources(TypeUrl.virtualHost).items.get(
      `${ROUTE_CONFIG}/app-0.example.com`,
    );
    assert.ok(vh, "the edited route's virtual host is served under its VHDS name");
    assert.match(JSON.stringify(vh.resource), /"e1"/, "with the new header value");
  });

  await t.step("a route to a new Service: its VirtualHost, Cluster and endpoints", async () => {
    const { encoded, sink, resolve } = await step([
      ...objects,
      ...service("svc-new", 250),
      route(ROUTES, 0, ["svc-new"]),
    ]);
    assert.deepEqual(encoded, { ...NOTHING, VirtualHost: 1, Cluster: 1, ClusterLoadAssignment: 1 });
    assert.equal(sink.translateVirtualHosts, 1);
    assert.equal(sink.translateClusters, 1);
    assert.equal(sink.translateEndpoints, 1);
    assert.equal(sink.encodeElements, 0);
    assert.equal(sink.translatePositions, 1, "the new virtual host alone not found in place");
    assert.equal(sink.reusePositions, 3, "the new VirtualHost, Cluster and endpoints looked up");
    assert.equal(sink.encodeLists, 3, "the three longer lists encoded whole");
    assert.equal(resolve.admit, 3, "the Service, its EndpointSlice and the route admitted");
    assert.equal(resolve.convertEdge, 1, "the new route alone converted");
    const snap = served();
    assert.equal(snap.resources(TypeUrl.virtualHost).items.size, ROUTES + 1);
    assert.ok(
      snap.resources(TypeUrl.virtualHost).items.has(`${ROUTE_CONFIG}/app-${ROUTES}.example.com`),
    );
    assert.ok(snap.resources(TypeUrl.cluster).items.has("svc-new.aether.internal"));
    assert.ok(snap.resources(TypeUrl.endpoint).items.has("svc-new.aether.internal"));
  });

  await t.step("a removed route: nothing encoded, its VirtualHost gone", async () => {
    const gone = `${ROUTE_CONFIG}/app-7.example.com`;
    assert.ok(served().resources(TypeUrl.virtualHost).items.has(gone));
    const before = versions();
    const { encoded, sink } = await step(objects.filter((_, i) => i !== routeAt("route-7")));
    assert.deepEqual(encoded, NOTHING);
    assert.equal(sink.translateVirtualHosts, 0);
    assert.equal(sink.encodeResources, 0);
    // The virtual hosts after the gap are found one position over, not looked up.
    assert.equal(sink.translatePositions, 0);
    assert.equal(sink.reusePositions, 0);
    assert.equal(sink.encodeLists, 1, "the shorter VirtualHost list encoded whole");
    const snap = served();
    assert.equal(snap.resources(TypeUrl.virtualHost).items.size, ROUTES);
    assert.ok(!snap.resources(TypeUrl.virtualHost).items.has(gone), "its VirtualHost is gone");
    const after = versions();
    assert.deepEqual(Object.keys(after).filter((k) => after[k] !== before[k]), ["VirtualHost"]);
  });
});
