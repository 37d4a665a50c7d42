/**
 * ClusterLoadAssignments (EDS): the fast path that endpoint churn re-runs on its own.
 * @module
 */
import type { IRCluster, IREndpoint } from "../../../lib/ir/mod.ts";
import type { NamedResource } from "./types.ts";
import { sortedByName } from "./util.ts";
import { endpointSocket } from "./mtls.ts";

function compare(a: string | number, b: string | number): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function byAddress(a: IREndpoint, b: IREndpoint): number {
  return compare(a.address, b.address) || compare(a.port, b.port);
}

/**
 * The ClusterLoadAssignment of one cluster: one LocalityLbEndpoints per zone (endpoints without
 * a zone first, without a locality), zones and endpoints sorted.
 */
export function loadAssignment(c: IRCluster): NamedResource {
  const byZone = new Map<string, IREndpoint[]>();
  for (const e of c.endpoints) {
    const zone = e.zone ?? "";
    const group = byZone.get(zone);
    if (group) group.push(e);
    else byZone.set(zone, [e]);
  }
  const endpoints = [...byZone.keys()].sort(compare).map((zone) => {
    const group: Record<string, unknown> = {};
    if (zone !== "") group.locality = { zone };
    group.lb_endpoints = byZone.get(zone)!.sort(byAddress).map((e) => {
      const { port, metadata } = endpointSocket(e);
      const lb: Record<string, unknown> = {
        endpoint: { address: { socket_address: { address: e.address, port_value: port } } },
      };
      if (metadata) lb.metadata = metadata;
      if (e.weight !== undefined) lb.load_balancing_weight = { value: e.weight };
      return lb;
    });
    return group;
  });
  return { name: c.name, resource: { cluster_name: c.name, endpoints } };
}

/** ClusterLoadAssignments for `clusters`, sorted by cluster name. */
export function translateEndpoints(clusters: IRCluster[]): NamedResource[] {
  return sortedByName(clusters).map(loadAssignment);
}
