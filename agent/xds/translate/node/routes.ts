/**
 * The node proxy's outbound routing, one table per caller namespace: the RouteConfiguration
 * `outbound.<namespace>` carries no virtual host of its own but turns on VHDS; every port of
 * every service in the dependency set is a VirtualHost resource `outbound.<namespace>/<cluster>`
 * (GAMMA routes of that namespace), and a Host the node does not know yet is fetched on demand.
 * @module
 */
import type { MeshService, MeshServicePort } from "../../../../lib/ir/mesh.ts";
import type { IRRoute, IRRouteMatch } from "../../../../lib/ir/types.ts";
import { route } from "../route.ts";
import type { NamedResource } from "../types.ts";
import { adsConfigSource } from "../util.ts";
import { outboundRouteName } from "./listener.ts";

/**
 * The routes a caller in `namespace` gets for one service port: the namespace's consumer routes
 * when it has any (they replace the producer routes), else the producer routes.
 */
export function callerRoutes(port: MeshServicePort, namespace: string): IRRoute[] {
  return port.consumerRoutes[namespace] ?? port.producerRoutes;
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

/** The VHDS name (and vhost `name`) of a port's virtual host: `outbound.<namespace>/<cluster>`. */
export function outboundVirtualHostName(namespace: string, cluster: string): string {
  return `${outboundRouteName(namespace)}/${cluster}`;
}

/** The VirtualHost resource of one service port as seen from `namespace`. */
function serviceVirtualHost(port: MeshServicePort, namespace: string): NamedResource {
  const name = outboundVirtualHostName(namespace, port.cluster);
  return {
    name,
    resource: {
      name,
      domains: [...port.domains],
      routes: portRoutes(port, namespace).map((r) => route(r, "http")),
    },
  };
}

/** The VirtualHost resources of `namespace` over the given services (in order). */
export function outboundVirtualHosts(namespace: string, services: MeshService[]): NamedResource[] {
  return services.flatMap((s) => s.ports.map((p) => serviceVirtualHost(p, namespace)));
}

/**
 * The RouteConfiguration `outbound.<namespace>`: no inline virtual host, VHDS over ADS (delta).
 * Its content never changes with the dependency set, so growing the set pushes no RDS.
 */
export function outboundRouteConfiguration(namespace: string): NamedResource {
  const name = outboundRouteName(namespace);
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
