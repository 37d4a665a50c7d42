/**
 * The node proxy's outbound routing, one table per caller namespace: the RouteConfiguration
 * `outbound.<namespace>` carries no virtual host of its own but turns on VHDS; every port of
 * every service in the dependency set is a VirtualHost resource `outbound.<namespace>/<cluster>`
 * (GAMMA routes of that namespace), and a Host the node does not know yet is fetched on demand.
 * @module
 */
import { callerRoutes, type MeshService, type MeshServicePort } from "../../../../lib/ir/mod.ts";
import type { IRRoute, IRRouteMatch } from "../../../../lib/ir/mod.ts";
import { route } from "../route.ts";
import type { NamedResource } from "../types.ts";
import { adsConfigSource } from "../util.ts";
import { outboundRouteName } from "./listener.ts";

/**
 * The mesh's retry floor, on every node proxy virtual host (a route's own retry stanza replaces
 * it): a request that never reached an app — the connection to its endpoint failed (a pod gone
 * between EDS updates, a refused or failed handshake), the stream was refused, or the connection
 * reset before the request went out — goes to another endpoint, twice at most. Safe for any
 * method, since no app saw it; a reset or an error after the request was sent is not retried.
 */
export function meshRetryFloor(): Record<string, unknown> {
  return {
    retry_on: "connect-failure,refused-stream,reset-before-request",
    num_retries: { value: 2 },
  };
}

/** Matches every path (a fresh object each time: routes are never shared). */
function anyPath(): IRRouteMatch {
  return { path: { type: "PathPrefix", value: "/" }, headers: [], queryParams: [] };
}

/** A port without routes passes through: every request goes to the port's own cluster. */
export function defaultRoute(port: MeshServicePort): IRRoute {
  return {
    name: `${port.cluster}/default`,
    match: anyPath(),
    action: { kind: "forward", backends: [{ cluster: port.cluster, weight: 1 }], mirrors: [] },
  };
}

/**
 * A routed port answers a request no rule matches with 404 (GAMMA). An explicit route rather
 * than Envoy's no-route 404: a request matching no route makes the on-demand filter ask VHDS for
 * its Host again, and the answer (the same vhost) would restart it, over and over.
 */
export function notFoundRoute(port: MeshServicePort): IRRoute {
  return {
    name: `${port.cluster}/not-found`,
    match: anyPath(),
    action: { kind: "direct", status: 404 },
  };
}

/**
 * The routes of one port for a caller in `namespace`: its routes then the 404 fallback, or, with
 * no route attached, the pass-through default route alone.
 */
export function portRoutes(port: MeshServicePort, namespace: string): IRRoute[] {
  const routes = callerRoutes(port, namespace);
  return routes.length ? [...routes, notFoundRoute(port)] : [defaultRoute(port)];
}

/**
 * The VHDS name (and vhost `name`) of a port's virtual host: `outbound.<caller>/<cluster>`, the
 * caller being the namespace (or `<namespace>/<serviceAccount>` with identity).
 */
export function outboundVirtualHostName(caller: string, cluster: string): string {
  return `${outboundRouteName(caller)}/${cluster}`;
}

/** Who calls: the route table key, the namespace whose routes apply, and the caller's identity. */
export interface Caller {
  /** `<namespace>`, or `<namespace>/<serviceAccount>` when the mesh has identity. */
  key: string;
  namespace: string;
  /** The caller's SPIFFE ID (its SVID is presented upstream); absent without identity. */
  spiffeId?: string;
}

/** The cluster a caller's routes name: the IR cluster, or per identity `<cluster>|<caller>`. */
export function callerCluster(caller: Caller, cluster: string): string {
  return caller.spiffeId ? `${cluster}|${caller.key}` : cluster;
}

/** A route with its backends and mirrors renamed to the caller's clusters. */
function forCaller(r: IRRoute, caller: Caller): IRRoute {
  if (!caller.spiffeId || r.action.kind !== "forward") return r;
  const a = r.action;
  return {
    ...r,
    action: {
      ...a,
      backends: a.backends.map((b) => ({ ...b, cluster: callerCluster(caller, b.cluster) })),
      mirrors: a.mirrors.map((m) => ({ ...m, cluster: callerCluster(caller, m.cluster) })),
    },
  };
}

/**
 * The Envoy routes of one service port as seen from `caller`: {@link portRoutes} of its
 * namespace, backends and mirrors named by the caller's clusters.
 */
export function callerPortRoutes(port: MeshServicePort, caller: Caller): Record<string, unknown>[] {
  return portRoutes(port, caller.namespace).map((r) =>
    route(forCaller(r, caller), { scheme: "http", port: port.port })
  );
}

/** The VirtualHost resource of one service port as seen from `caller`. */
function serviceVirtualHost(port: MeshServicePort, caller: Caller): NamedResource {
  const name = outboundVirtualHostName(caller.key, port.cluster);
  return {
    name,
    resource: {
      name,
      domains: [...port.domains],
      routes: callerPortRoutes(port, caller),
      retry_policy: meshRetryFloor(),
    },
  };
}

/** The VirtualHost resources of a caller (a namespace) over the given services (in order). */
export function outboundVirtualHosts(
  caller: string | Caller,
  services: MeshService[],
): NamedResource[] {
  const c = typeof caller === "string" ? { key: caller, namespace: caller } : caller;
  // A port without domains (UDP, SCTP) carries no HTTP: no virtual host.
  return services.flatMap((s) =>
    s.ports.flatMap((p) => p.domains.length > 0 ? [serviceVirtualHost(p, c)] : [])
  );
}

/**
 * The RouteConfiguration `outbound.<caller>`: no inline virtual host, VHDS over ADS (delta).
 * Its content never changes with the dependency set, so growing the set pushes no RDS.
 */
export function outboundRouteConfiguration(caller: string): NamedResource {
  const name = outboundRouteName(caller);
  return {
    name,
    resource: {
      name,
      vhds: { config_source: adsConfigSource() },
      // Invalid backends name missing clusters on purpose (they answer 500), so never reject.
      validate_clusters: { value: false },
    },
  };
}
