/**
 * translate: aether's IR → Envoy xDS resources. Pure and deterministic: no I/O, no clock, no
 * globals; the same IR always yields deep-equal output, every list sorted by name.
 *
 * Names an integrator relies on: Listener = IRListener.name; RouteConfiguration (RDS) =
 * IRHttpFilterChain.routeConfigName, with VHDS on and no inline virtual host; VirtualHost (VHDS) =
 * `<routeConfigName>/<IRVirtualHost.name>`; Cluster and ClusterLoadAssignment = IRCluster.name;
 * Secret (SDS) = IRSecret.name. A chain with thousands of exact hostnames is served scoped
 * instead (scoped.ts): a ScopedRouteConfiguration (SRDS) `<routeConfigName>/<domain>` per domain
 * and a RouteConfiguration `<routeConfigName>/<IRVirtualHost.name>` per virtual host, no VHDS.
 * Everything dynamic is requested over ADS, which must be delta (Envoy serves VHDS over delta xDS
 * only).
 * @module
 */
import type { IR } from "../../../lib/ir/mod.ts";
import { translateEndpoints } from "./endpoint.ts";
import { listener } from "./listener.ts";
import { edgeLimitDefaults } from "./edge_limits.ts";
import { routeConfiguration, routeTableBase, TranslateMemo, vhdsVirtualHosts } from "./route.ts";
import { DEFAULT_SCOPED_ROUTES_AT, isScoped } from "./scoped.ts";
import { secret } from "./secret.ts";
import type { EnvoyResources, NamedResource, TranslateOptions } from "./types.ts";

export type { EnvoyResources, NamedResource, TranslateOptions } from "./types.ts";
export { DEFAULT_SCOPED_ROUTES_AT, translateEndpoints, TranslateMemo };
export {
  checkEdgeLimits,
  edgeLimitDefaults,
  type EdgeLimits,
  type UnderscoreHeaderAction,
} from "./edge_limits.ts";

/**
 * Request headers aether sets itself and therefore never accepts from a client at the edge.
 * Envoy's core API removes headers by exact name only, so this list is the `x-aether-*` family.
 */
export const AETHER_INTERNAL_HEADERS: readonly string[] = [
  "x-aether-client-identity",
  "x-aether-namespace",
  "x-aether-origin",
  "x-aether-route",
];

/**
 * Translates a whole IR into Envoy resources, each kind sorted by name. `memo` holds what one
 * translator remembers between calls (pass the same one for one stream of IRs: an unchanged IR
 * virtual host is not translated again); without one, the translation is cold. The result may
 * share objects with earlier results of the same memo: never mutate it.
 */
export function translate(
  ir: IR,
  options: TranslateOptions = {},
  memo: TranslateMemo = new TranslateMemo(),
): EnvoyResources {
  const statPrefix = options.statPrefix ?? "aether";
  const edge = options.edge ?? true;
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const edgeLimits = { ...edgeLimitDefaults, ...options.edgeLimits };
  const routeOpts = { stripRequestHeaders: edge ? [...AETHER_INTERNAL_HEADERS] : [] };
  const scopedAt = options.scopedRoutesAt ?? DEFAULT_SCOPED_ROUTES_AT;
  const scopedOnDemand = options.scopedRoutesOnDemand === true;
  const chains = ir.listeners.flatMap((l) =>
    l.filterChains.flatMap((c) =>
      c.kind === "http"
        ? [{
          c,
          listener: {
            scheme: l.protocol === "HTTPS" ? "https" as const : "http" as const,
            port: l.port,
          },
          scoped: isScoped(c, scopedAt),
        }]
        : []
    )
  );
  const plain = chains.filter((x) => !x.scoped);
  const scoped = chains.filter((x) => x.scoped);
  const scopedTables = new Set(scoped.map(({ c }) => c.routeConfigName));
  const base = scoped.length ? routeTableBase(routeOpts) : {};
  const hosts = scoped.flatMap(({ c, listener }) =>
    memo.scoped.hosts(c, vhdsVirtualHosts(c, listener, memo), base, scopedOnDemand)
  );
  const tables = [
    ...plain.map(({ c }) => routeConfiguration(c, routeOpts)),
    ...hosts.map((h) => h.table),
  ];
  // Each list in its last order when its names are as last time (an edit): positions stay.
  const order = memo.order;
  const out: EnvoyResources = {
    listeners: order.listeners.sorted(
      ir.listeners.map((l) =>
        listener(l, { statPrefix, edge, edgeLimits, scopedTables, scopedOnDemand })
      ),
    ),
    // One chain's tables have distinct names (its own, or one per host when scoped).
    routes: order.routes.sorted(chains.length === 1 ? tables : uniqueByName(tables)),
    virtualHosts: order.virtualHosts.sorted(
      // One chain's virtual hosts have distinct names (one per domain).
      plain.length === 1
        ? vhdsVirtualHosts(plain[0].c, plain[0].listener, memo)
        : uniqueByName(plain.flatMap(({ c, listener }) => vhdsVirtualHosts(c, listener, memo))),
    ),
    clusters: order.clusters.sorted(
      ir.clusters.map((c) => memo.clusters.cluster(c, { connectTimeoutMs, mtls: options.mtls })),
    ),
    endpoints: order.endpoints.sorted(ir.clusters).map((c) => memo.clusters.loadAssignment(c)),
    secrets: order.secrets.sorted(ir.secrets.map(secret)),
  };
  // Only chains served scoped have scopes (and the list is left out without them).
  if (hosts.length) {
    const scopes = hosts.flatMap((h) => h.scopes);
    // One chain's scopes have distinct names (one per host).
    out.scopedRoutes = order.scopedRoutes.sorted(
      scoped.length === 1 ? scopes : uniqueByName(scopes),
    );
  }
  memo.clusters.settle();
  memo.keepChains(new Set(chains.map(({ c }) => c.routeConfigName)));
  memo.scoped.keep(scopedTables);
  return out;
}

/** Keeps the first resource of each name (chains may share one routeConfigName and its vhosts). */
function uniqueByName(list: NamedResource[]): NamedResource[] {
  const seen = new Set<string>();
  return list.filter((r) => !seen.has(r.name) && seen.add(r.name));
}
export {
  bundleSecret,
  bundleSecretName,
  DEFAULT_ID_TEMPLATE,
  spiffeIdFor,
  svidSecret,
} from "./mtls.ts";
export { sortedByName } from "./util.ts";
export {
  EAST_WEST_LISTENER,
  type EastWestOptions,
  type EastWestTranslation,
  translateEastWest,
} from "./east_west.ts";
export { UPSTREAM_URI_SAN_HEADER } from "./uri_san.ts";
