/**
 * The same-node mTLS hop without the kernel: in one node's ClusterLoadAssignments, an endpoint
 * dialled over mTLS (`podIP:15008`) whose pod has this node's internal inbound listener for the
 * cluster's SNI (inbound.ts) is addressed to that listener instead (`envoy_internal_address`).
 * The caller's cluster, its transport socket match (its SVID, the expected server ID), the
 * inbound chain (the pod's SVID, the client-certificate checks, XFCC) stay as they are; only the
 * wire changes: a user-space connection on the caller's worker thread rather than loopback TCP
 * through the pod's netns, which the benchmark measured at about half the TLS leg's transit time
 * on a loaded machine (docs/performance.md).
 *
 * Gated on the listeners: an endpoint is rewritten only when the node's listener list has the
 * internal listener it names, so a list of endpoints can never point at a listener the node does
 * not have (the endpoint fast path re-runs this with the node's current listeners). Pure; a
 * ClusterLoadAssignment with nothing to rewrite is returned as the very same object.
 * @module
 */
import type { IRCluster } from "../../../../lib/ir/mod.ts";
import { MESH_MTLS_PORT, meshSni, SOCKET_MATCH_KEY } from "../mtls.ts";
import type { NamedResource } from "../types.ts";
import { INBOUND_INTERNAL_PREFIX, inboundInternalListenerName } from "./inbound.ts";

interface LbEndpoint {
  endpoint: { address: { socket_address?: { address: string; port_value: number } } };
  metadata?: { filter_metadata?: Record<string, unknown> };
}

interface Cla {
  endpoints: { lb_endpoints: LbEndpoint[] }[];
}

/** The internal listener a mesh endpoint of `sni` should use, if `names` has it. */
function internalTarget(
  lb: LbEndpoint,
  sni: string,
  names: ReadonlySet<string>,
): string | undefined {
  const sa = lb.endpoint.address.socket_address;
  if (
    !sa || sa.port_value !== MESH_MTLS_PORT || !lb.metadata?.filter_metadata?.[SOCKET_MATCH_KEY]
  ) {
    return undefined;
  }
  const name = inboundInternalListenerName(sa.address, sni);
  return names.has(name) ? name : undefined;
}

/**
 * `endpoints` with this node's local mesh endpoints addressed to its internal inbound listeners
 * (those in `listeners`); `clusters` gives each assignment's IR cluster (for its SNI).
 */
export function localizeEndpoints(
  endpoints: NamedResource[],
  clusters: ReadonlyMap<string, IRCluster>,
  listeners: readonly NamedResource[],
): NamedResource[] {
  const names = new Set(
    listeners.filter((l) => l.name.startsWith(INBOUND_INTERNAL_PREFIX)).map((l) => l.name),
  );
  if (names.size === 0) return endpoints;
  return endpoints.map((e) => {
    const c = clusters.get(e.name);
    if (!c) return e;
    const sni = meshSni(c);
    const cla = e.resource as unknown as Cla;
    if (!cla.endpoints.some((g) => g.lb_endpoints.some((lb) => internalTarget(lb, sni, names)))) {
      return e;
    }
    const endpointGroups = cla.endpoints.map((g) => ({
      ...g,
      lb_endpoints: g.lb_endpoints.map((lb) => {
        const target = internalTarget(lb, sni, names);
        if (!target) return lb;
        return {
          ...lb,
          endpoint: {
            ...lb.endpoint,
            address: { envoy_internal_address: { server_listener_name: target } },
          },
        };
      }),
    }));
    return { name: e.name, resource: { ...e.resource, endpoints: endpointGroups } };
  });
}
