/**
 * An exporting cluster's producer route as its importers serve it (pure; GEP-1748): the route
 * for the clusterset service. Its parentRefs name the ServiceImport of each exported Service it
 * is for, so it attaches to that import's clusterset VIP Service as a producer route (every
 * caller of the clusterset name obeys it, unless a consumer route of the caller's namespace is
 * there); its backendRefs to Services name the ServiceImports of the same name — the exporting
 * cluster's Services are the clusterset's services, reached through the registry's endpoints.
 * Everything else of the route is kept as its cluster's API server admitted it.
 * @module
 */
import { parseRouteRecord, type RouteRecord } from "./route_record.ts";
import { MCS_GROUP } from "./types.ts";

/** The annotation on an imported route naming where it came from: `<cluster>/<kind>/<ns>/<name>`. */
export const ROUTE_ORIGIN_ANNOTATION = "multicluster.aether.io/route-origin";

/** The HTTPRoute an importer serves for one producer route record (a plain Kubernetes object). */
export type ImportedRoute = {
  apiVersion: "gateway.networking.k8s.io/v1";
  kind: "HTTPRoute";
  metadata: {
    namespace: string;
    name: string;
    creationTimestamp?: string;
    annotations: Record<string, string>;
  };
  spec: {
    parentRefs: Record<string, unknown>[];
    hostnames?: string[];
    rules: Record<string, unknown>[];
  };
};

type Ref = Record<string, unknown>;

/** A backendRef to a core Service → to the ServiceImport of that name; any other as it is. */
function importRef<T extends Ref>(ref: T): T {
  const group = ref.group ?? "", kind = ref.kind ?? "Service";
  if ((group !== "" && group !== "core") || kind !== "Service") return ref;
  return { ...ref, group: MCS_GROUP, kind: "ServiceImport" };
}

function importFilters(filters: unknown): unknown {
  if (!Array.isArray(filters)) return filters;
  return filters.map((f: Ref) => {
    const mirror = f.requestMirror as Ref | undefined;
    if (!mirror?.backendRef) return f;
    return { ...f, requestMirror: { ...mirror, backendRef: importRef(mirror.backendRef as Ref) } };
  });
}

function importRule(rule: Ref): Ref {
  const out: Ref = { ...rule };
  if (rule.filters !== undefined) out.filters = importFilters(rule.filters);
  if (Array.isArray(rule.backendRefs)) {
    out.backendRefs = rule.backendRefs.map((b: Ref) => {
      const ref = importRef(b);
      return b.filters === undefined ? ref : { ...ref, filters: importFilters(b.filters) };
    });
  }
  return out;
}

/**
 * The name of an imported route: `<name>.<cluster id>` — one per exporting cluster, beside the
 * importing cluster's own routes of that name.
 */
export function importedRouteName(r: Pick<RouteRecord, "name" | "cluster">): string {
  return `${r.name}.${r.cluster}`;
}

/** The HTTPRoute importers serve for `r`. */
export function importedRoute(r: RouteRecord): ImportedRoute {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      namespace: r.namespace,
      name: importedRouteName(r),
      ...(r.created ? { creationTimestamp: r.created } : {}),
      annotations: {
        [ROUTE_ORIGIN_ANNOTATION]: `${r.cluster}/${r.kind}/${r.namespace}/${r.name}`,
      },
    },
    spec: {
      parentRefs: r.parents.map((p) => ({
        group: MCS_GROUP,
        kind: "ServiceImport",
        name: p.name,
        ...(p.port !== undefined ? { port: p.port } : {}),
        ...(p.sectionName !== undefined ? { sectionName: p.sectionName } : {}),
      })),
      ...(r.hostnames ? { hostnames: r.hostnames } : {}),
      rules: r.rules.map(importRule),
    },
  };
}

/**
 * The imported routes of every `routes/…` value given (sorted by namespace then name), and how
 * many values were skipped as malformed (or of a record version this code does not read).
 */
export function importedRoutes(
  values: Iterable<string>,
): { routes: ImportedRoute[]; skipped: number } {
  const routes: ImportedRoute[] = [];
  let skipped = 0;
  for (const value of values) {
    const r = parseRouteRecord(value);
    if (r) routes.push(importedRoute(r));
    else skipped++;
  }
  const key = (r: ImportedRoute) => `${r.metadata.namespace}/${r.metadata.name}`;
  routes.sort((a, b) => key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0);
  return { routes, skipped };
}
