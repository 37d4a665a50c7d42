/**
 * Producer routes in the registry (pure): a GAMMA HTTPRoute whose parentRef is an exported Service
 * in the route's own namespace is that Service's owner's routing for every caller (a 90/10
 * canary split …). Its exporting cluster publishes it under `routes/HTTPRoute/<ns>/<name>` of its
 * origin as a versioned JSON record; importers read it back checked (a registry holds what other
 * clusters wrote: a malformed record, or one of a version this code does not know, is skipped,
 * never trusted).
 *
 * ```json
 * { "version": 1, "cluster": "b.eu", "kind": "HTTPRoute", "namespace": "shop", "name": "split",
 *   "created": "2026-01-01T00:00:00Z", "parents": [{ "name": "web", "port": 8080 }],
 *   "rules": [{ "backendRefs": [{ "name": "web-v1", "port": 8080, "weight": 90 }, …] }] }
 * ```
 * @module
 */
import { routeKey } from "../registry/mod.ts";

/** The record version this code writes and reads. */
export const ROUTE_RECORD_VERSION = 1;

/** An exported Service a producer route is for: its name and the port or port name it narrows to. */
export interface RouteParent {
  name: string;
  port?: number;
  sectionName?: string;
}

/** One producer route as the registry holds it (`routes/HTTPRoute/<ns>/<name>`). */
export interface RouteRecord {
  version: typeof ROUTE_RECORD_VERSION;
  /** The exporting cluster's MCS cluster id. */
  cluster: string;
  kind: "HTTPRoute";
  namespace: string;
  name: string;
  /** The route's creationTimestamp: Gateway API precedence (oldest first) holds across clusters. */
  created: string;
  /** The exported Services of the route's namespace it is a producer route of. */
  parents: RouteParent[];
  hostnames?: string[];
  /** The route's `spec.rules` as its cluster's API server admitted them. */
  rules: Record<string, unknown>[];
}

/** The parts of an HTTPRoute a producer route record reads. */
export interface HTTPRouteShape {
  metadata: { namespace?: string; name: string; creationTimestamp?: string };
  spec?: {
    parentRefs?: {
      group?: string;
      kind?: string;
      namespace?: string;
      name: string;
      port?: number;
      sectionName?: string;
    }[];
    hostnames?: string[];
    rules?: Record<string, unknown>[];
  };
}

const isServiceParent = (p: { group?: string; kind?: string }) =>
  (p.group === undefined || p.group === "" || p.group === "core") &&
  (p.kind === undefined || p.kind === "Service");

/**
 * The record `cluster` publishes for `route`, or undefined when it is no producer route of an
 * exported Service: only its parentRefs naming a Service of its own namespace that is in
 * `exported` (`<ns>/<name>` of the cluster's valid exports) count.
 */
export function producerRouteRecord(
  cluster: string,
  route: HTTPRouteShape,
  exported: ReadonlySet<string>,
): RouteRecord | undefined {
  const ns = route.metadata.namespace ?? "default";
  const parents: RouteParent[] = [];
  for (const p of route.spec?.parentRefs ?? []) {
    if (!isServiceParent(p) || (p.namespace ?? ns) !== ns) continue;
    if (!exported.has(`${ns}/${p.name}`)) continue;
    parents.push({
      name: p.name,
      ...(p.port !== undefined ? { port: p.port } : {}),
      ...(p.sectionName !== undefined ? { sectionName: p.sectionName } : {}),
    });
  }
  if (parents.length === 0) return undefined;
  return {
    version: ROUTE_RECORD_VERSION,
    cluster,
    kind: "HTTPRoute",
    namespace: ns,
    name: route.metadata.name,
    created: route.metadata.creationTimestamp ?? "",
    parents,
    ...(route.spec?.hostnames?.length ? { hostnames: route.spec.hostnames } : {}),
    rules: route.spec?.rules ?? [],
  };
}

/** The `routes/…` keys and values `cluster` publishes for its producer routes of exported Services. */
export function producerRouteEntries(
  cluster: string,
  routes: readonly HTTPRouteShape[],
  exported: ReadonlySet<string>,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const route of routes) {
    const r = producerRouteRecord(cluster, route, exported);
    if (r) out.set(routeKey(r.kind, r.namespace, r.name), JSON.stringify(r));
  }
  return out;
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const optional = (v: unknown, ok: (v: unknown) => boolean) => v === undefined || ok(v);
const isPort = (v: unknown) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65535;
const isString = (v: unknown) => typeof v === "string";
const listOf = (v: unknown, ok: (v: unknown) => boolean) => Array.isArray(v) && v.every(ok);

/** A backendRef (or a mirror filter's): a named object, its optional group, kind, port, weight. */
function isBackendRef(v: unknown): boolean {
  return isObject(v) && typeof v.name === "string" && v.name !== "" &&
    optional(v.group, isString) && optional(v.kind, isString) &&
    optional(v.namespace, isString) && optional(v.port, isPort) &&
    optional(v.weight, (w) => Number.isInteger(w) && (w as number) >= 0) &&
    optional(v.filters, (f) => listOf(f, isFilter));
}

function isFilter(v: unknown): boolean {
  if (!isObject(v) || typeof v.type !== "string") return false;
  const mirror = v.requestMirror;
  return optional(mirror, (m) => isObject(m) && isBackendRef(m.backendRef));
}

function isRule(v: unknown): boolean {
  return isObject(v) && optional(v.matches, (m) => listOf(m, isObject)) &&
    optional(v.filters, (f) => listOf(f, isFilter)) &&
    optional(v.backendRefs, (b) => listOf(b, isBackendRef)) &&
    optional(v.timeouts, isObject) && optional(v.name, isString);
}

function isParent(v: unknown): boolean {
  return isObject(v) && typeof v.name === "string" && v.name !== "" &&
    optional(v.port, isPort) && optional(v.sectionName, isString);
}

/**
 * A registry value read back as a RouteRecord, or undefined when it is not one of this version:
 * the record's fields, its parents, and its rules' shape down to every backendRef (what an
 * importer rewrites); the rest of a rule is checked by admission where it is served.
 */
export function parseRouteRecord(value: string): RouteRecord | undefined {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (!isObject(v) || v.version !== ROUTE_RECORD_VERSION || v.kind !== "HTTPRoute") {
    return undefined;
  }
  if (!["cluster", "namespace", "name", "created"].every((f) => typeof v[f] === "string")) {
    return undefined;
  }
  if (v.namespace === "" || v.name === "") return undefined;
  if (!Array.isArray(v.parents) || v.parents.length === 0 || !v.parents.every(isParent)) {
    return undefined;
  }
  if (!optional(v.hostnames, (h) => listOf(h, isString))) return undefined;
  if (!listOf(v.rules, isRule)) return undefined;
  return v as unknown as RouteRecord;
}
