/**
 * The node proxy's per-pod outbound listeners: one `127.0.0.1:18081` listener per pod, bound
 * inside the pod's network namespace (`SocketAddress.network_namespace_filepath`, Envoy ≥ 1.35),
 * so the listener alone tells the proxy who calls: its pod, hence its namespace (the route table
 * with that namespace's GAMMA consumer routes).
 * @module
 */
import type { NodePod } from "../../../../lib/ir/mod.ts";
import { hcmBase, routerFilter } from "../listener.ts";
import type { NamedResource } from "../types.ts";
import { adsConfigSource, any, duration, statName } from "../util.ts";

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ON_DEMAND = "envoy.extensions.filters.http.on_demand.v3.OnDemand";

/** HTTP filter name of the on-demand filter. */
export const ON_DEMAND_FILTER = "envoy.filters.http.on_demand";

/** Resolved options of the outbound listeners. */
export interface OutboundListenerOptions {
  statPrefix: string;
  /** Address of the explicit-egress listener inside each pod (127.0.0.1). */
  address: string;
  /** Port of the explicit-egress listener inside each pod (18081). */
  port: number;
  /**
   * With identity: a route's caller cluster may not exist yet (they are scoped to what each
   * caller asked for), so the on-demand filter also fetches clusters (on-demand CDS), waiting
   * this long. Unset: virtual hosts only.
   */
  odcdsTimeoutMs?: number;
}

/** The outbound listener name of a pod: `outbound|<namespace>/<pod>`. */
export function outboundListenerName(pod: Pick<NodePod, "namespace" | "name">): string {
  return `outbound|${pod.namespace}/${pod.name}`;
}

/**
 * The RouteConfiguration (RDS) name of a caller: `outbound.<namespace>`, or with identity
 * `outbound.<namespace>/<serviceAccount>`.
 */
export function outboundRouteName(caller: string): string {
  return `outbound.${caller}`;
}

/**
 * The outbound HTTP connection manager: routes of the caller's namespace over RDS (+ VHDS), then
 * the on-demand filter (a request whose Host has no virtual host yet waits for on-demand VHDS),
 * then the router. Unlike the edge, the Host port is kept: it picks the service port's virtual
 * host (and is part of the VHDS alias `<route config>/<host:port>`).
 */
function outboundHcm(
  pod: NodePod,
  opts: OutboundListenerOptions,
  caller: string,
): Record<string, unknown> {
  const statPrefix = `${opts.statPrefix}_outbound_${statName(`${pod.namespace}_${pod.name}`)}`;
  return hcmBase(statPrefix, outboundRouteName(caller), [
    {
      name: ON_DEMAND_FILTER,
      typed_config: any(
        ON_DEMAND,
        opts.odcdsTimeoutMs === undefined
          ? undefined
          : { odcds: { source: adsConfigSource(), timeout: duration(opts.odcdsTimeoutMs) } },
      ),
    },
    routerFilter(),
  ]);
}

/**
 * The explicit-egress listener of one pod. Plain HTTP from the app; the upstream side (clusters)
 * carries mTLS when the mesh has identity. `caller` names its route table (default: the pod's
 * namespace). A pod without a netns path binds in Envoy's own namespace.
 */
export function outboundListener(
  pod: NodePod,
  opts: OutboundListenerOptions,
  caller: string = pod.namespace,
): NamedResource {
  const name = outboundListenerName(pod);
  const socketAddress: Record<string, unknown> = { address: opts.address, port_value: opts.port };
  if (pod.netnsPath) socketAddress.network_namespace_filepath = pod.netnsPath;
  return {
    name,
    resource: {
      name,
      stat_prefix: `${opts.statPrefix}_${statName(name)}`,
      address: { socket_address: socketAddress },
      filter_chains: [{
        name: "outbound",
        filters: [{
          name: "envoy.filters.network.http_connection_manager",
          typed_config: any(HCM, outboundHcm(pod, opts, caller)),
        }],
      }],
    },
  };
}
