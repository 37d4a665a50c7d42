/**
 * The edge at 10,000 HTTPRoutes, for the tests that count what an edit re-encodes
 * (edge_reencode_test.ts with VHDS, edge_scoped_reencode_test.ts with scoped routes): the config,
 * its routes and an engine with the edge's sink whose counters {@link edge10k} reads.
 * @module
 */
import assert from "node:assert/strict";
import type { TranslateOptions } from "./translate/mod.ts";
import { Engine } from "../../lib/engine/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import type { MemoStats } from "../../lib/memo/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { gateway, gatewayClass, httpRoute } from "../../testbed/fixtures/objects.ts";
import { EncodeMetrics, SnapshotCache } from "./cache/mod.ts";
import { EdgeSnapshots } from "./edge_snapshots.ts";
import { TypeUrl } from "./proto.ts";

export const ROUTES = 10_000;
export const SERVICES = 100;
/** The route with more rules than the chunked encoder encodes in one piece (proto.ts CHUNK_AT). */
const WIDE_RULES = 10;
/** The edge listener's RouteConfiguration: VHDS names are `<it>/<host>`. */
export const ROUTE_CONFIG = "http.10080";

export function service(name: string, octet: number): KubeObject[] {
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
export function route(i: number, edit = 0, backends?: string[]): KubeObject {
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

export function config(): KubeObject[] {
  const out = [gatewayClass(), gateway("edge", [{ name: "http", protocol: "HTTP", port: 10080 }])];
  for (let s = 0; s < SERVICES; s++) out.push(...service(`svc-${s}`, s + 1));
  for (let i = 0; i < ROUTES; i++) out.push(route(i));
  return out;
}

export const kinds = {
  Listener: TypeUrl.listener,
  RouteConfiguration: TypeUrl.route,
  VirtualHost: TypeUrl.virtualHost,
  ScopedRouteConfiguration: TypeUrl.scopedRoute,
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
export const NOTHING = {
  Listener: 0,
  RouteConfiguration: 0,
  VirtualHost: 0,
  ScopedRouteConfiguration: 0,
  Cluster: 0,
  ClusterLoadAssignment: 0,
  Secret: 0,
};

/**
 * An engine with the edge's sink on a {@link config} (applied), with `translate` options; `step`
 * applies objects and returns what it encoded per kind, the sink's and resolve's memo misses.
 */
export async function edge10k(translate?: TranslateOptions) {
  const registry = new Registry();
  // The sink's own counters: a registry gives one counter per name.
  const encodes = new EncodeMetrics(registry);
  const cache = new SnapshotCache();
  const snapshots = new EdgeSnapshots({ cache, metrics: registry, translate });
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
  return {
    registry,
    encoded,
    step,
    served,
    versions,
    routeAt,
    objects: () => objects,
  };
}
