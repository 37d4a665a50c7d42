/**
 * The node proxy's outbound RouteConfigurations, one per caller namespace: a virtual host per
 * port of every service in the dependency set (GAMMA routes of that namespace, then the default
 * pass-through), and a catch-all that sends a cold service's traffic to the cluster named by
 * `:authority`, fetched with on-demand CDS.
 * @module
 */
import type { MeshService, MeshServicePort } from "../../../../lib/ir/mesh.ts";
import type { IRRoute } from "../../../../lib/ir/types.ts";
import { route } from "../route.ts";
import type { NamedResource } from "../types.ts";
import { adsConfigSource, any, duration } from "../util.ts";
import { ON_DEMAND_FILTER, outboundRouteName } from "./listener.ts";

const ON_DEMAND_PER_ROUTE = "envoy.extensions.filters.http.on_demand.v3.PerRouteConfig";

/** Name of the catch-all virtual host (and of its single route). */
export const COLD_VHOST = "cold";

/** Resolved options of the outbound route tables. */
export interface OutboundRouteOptions {
  /** How long a request waits for an on-demand cluster before 503. */
  odcdsTimeoutMs: number;
}

/**
 * The routes a caller in `namespace` gets for one service port: the namespace's consumer routes
 * when it has any (they replace the producer routes), else the producer routes.
 */
export function callerRoutes(port: MeshServicePort, namespace: string): IRRoute[] {
  return port.consumerRoutes[namespace] ?? port.producerRoutes;
}

/** The spec's additive default: whatever no rule matched goes to the port's own cluster. */
export function defaultRoute(port: MeshServicePort): IRRoute {
  return {
    name: `${port.cluster}/default`,
    match: { path: { type: "PathPrefix", value: "/" }, headers: [], queryParams: [] },
    action: { kind: "forward", backends: [{ cluster: port.cluster, weight: 1 }], mirrors: [] },
  };
}

/** The virtual host of one service port as seen from `namespace`. */
function serviceVirtualHost(port: MeshServicePort, namespace: string): Record<string, unknown> {
  return {
    name: port.cluster,
    domains: [...port.domains],
    routes: [...callerRoutes(port, namespace), defaultRoute(port)].map((r) => route(r, "http")),
  };
}

/**
 * The catch-all: any other Host names the cluster itself (`<authority>` or `<authority>:<port>`,
 * the IR's cluster names); the on-demand filter's per-route config fetches a missing cluster over
 * ADS (delta), and a cluster that does not exist answers 503.
 */
function coldVirtualHost(opts: OutboundRouteOptions): Record<string, unknown> {
  const odcds = { source: adsConfigSource(), timeout: duration(opts.odcdsTimeoutMs) };
  return {
    name: COLD_VHOST,
    domains: ["*"],
    routes: [{
      name: COLD_VHOST,
      match: { prefix: "/" },
      route: { cluster_header: ":authority", timeout: duration(0) },
      typed_per_filter_config: { [ON_DEMAND_FILTER]: any(ON_DEMAND_PER_ROUTE, { odcds }) },
    }],
  };
}

/** The RouteConfiguration `outbound.<namespace>` over the given services (in order). */
export function outboundRouteConfiguration(
  namespace: string,
  services: MeshService[],
  opts: OutboundRouteOptions,
): NamedResource {
  const name = outboundRouteName(namespace);
  return {
    name,
    resource: {
      name,
      virtual_hosts: [
        ...services.flatMap((s) => s.ports.map((p) => serviceVirtualHost(p, namespace))),
        coldVirtualHost(opts),
      ],
      // Invalid backends name missing clusters on purpose (they answer 500), so never reject.
      validate_clusters: { value: false },
    },
  };
}
