/**
 * The MCS controller's producer routes: this cluster's GAMMA HTTPRoutes whose parentRef is one of
 * its exported Services in the route's own namespace, published in its registry origin beside the
 * exports (`routes/HTTPRoute/<ns>/<name>`, lib/mcs/route_record.ts). They are part of the origin's
 * desired content, so a route deleted, no longer a producer route, or whose Service is no longer
 * exported leaves the registry with the next publish. Until the cluster's HTTPRoutes have been
 * listed (their CRD may be missing: the watch then retries without holding up the exports) the
 * records already published are kept, less those whose Services are no longer exported.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import { type KubeClient, Reflector } from "../../lib/kube/mod.ts";
import type { Counter } from "../../lib/metrics/mod.ts";
import { type HTTPRouteShape, parseRouteRecord, producerRouteEntries } from "../../lib/mcs/mod.ts";

const EXPORT_PREFIX = "exports/";
const ROUTE_PREFIX = "routes/";

/** Inputs of {@link plannedRouteEntries}. */
export interface RouteInputs {
  /** This cluster's MCS cluster id. */
  cluster: string;
  /** The origin's other planned entries (`exports/<ns>/<name>` name the exported Services). */
  published: ReadonlyMap<string, string>;
  /** This cluster's HTTPRoutes; undefined while they have not been listed. */
  routes: readonly HTTPRouteShape[] | undefined;
  /** The origin's entries as the registry holds them now (this cluster's last publish). */
  current: Iterable<readonly [string, string]>;
}

/** The `routes/…` entries this cluster's origin should hold. */
export function plannedRouteEntries(inputs: RouteInputs): Map<string, string> {
  const exported = new Set(
    [...inputs.published.keys()].filter((k) => k.startsWith(EXPORT_PREFIX)).map((k) =>
      k.slice(EXPORT_PREFIX.length)
    ),
  );
  if (inputs.routes) return producerRouteEntries(inputs.cluster, inputs.routes, exported);
  const kept = new Map<string, string>();
  for (const [key, value] of inputs.current) {
    if (!key.startsWith(ROUTE_PREFIX)) continue;
    const r = parseRouteRecord(value);
    if (r?.parents.some((p) => exported.has(`${r.namespace}/${p.name}`))) kept.set(key, value);
  }
  return kept;
}

/** What a producer route record needs of an HTTPRoute (the rest is not kept in memory). */
// deno-lint-ignore no-explicit-any
export function routeShape(raw: any): HTTPRouteShape {
  return {
    metadata: {
      namespace: raw?.metadata?.namespace,
      name: raw?.metadata?.name ?? "",
      creationTimestamp: raw?.metadata?.creationTimestamp,
    },
    spec: {
      parentRefs: raw?.spec?.parentRefs,
      hostnames: raw?.spec?.hostnames,
      rules: raw?.spec?.rules,
    },
  };
}

/** The watch of this cluster's HTTPRoutes (gateway.networking.k8s.io/v1) for producer routes. */
export function httpRouteReflector(opts: {
  client: KubeClient;
  logger: Logger;
  metrics: { events: Counter; lists: Counter; errors: Counter };
  onChange: () => void;
}): Reflector<HTTPRouteShape> {
  return new Reflector<HTTPRouteShape>({
    client: opts.client,
    path: "/apis/gateway.networking.k8s.io/v1/httproutes",
    kind: "HTTPRoute",
    transform: routeShape,
    onChange: opts.onChange,
    logger: opts.logger.child("HTTPRoute"),
    metrics: opts.metrics,
  });
}
