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
 * The ClusterLoadAssignment of one cluster: one LocalityLbEndpoints per priority and zone
 * (priority 0 first; endpoints without a zone first within a priority, without a locality),
 * zones and endpoints sorted.
 */
export function loadAssignment(c: IRCluster): NamedResource {
  const groups = new Map<string, { priority: number; zone: string; list: IREndpoint[] }>();
  for (const e of c.endpoints) {
    const priority = e.priority ?? 0, zone = e.zone ?? "";
    const key = `${String(priority).padStart(4, "0")}|${zone}`;
    const group = groups.get(key);
    if (group) group.list.push(e);
    else groups.set(key, { priority, zone, list: [e] });
  }
  const endpoints = [...groups.keys()].sort(compare).map((key) => {
    const { priority, zone, list } = groups.get(key)!;
    const group: Record<string, unknown> = {};
    if (zone !== "") group.locality = { zone };
    if (priority !== 0) group.priority = priority;
    group.lb_endpoints = list.sort(byAddress).map((e) => {
      const { address, port, metadata } = endpointSocket(e);
      const lb: Record<string, unknown> = {
        endpoint: { address: { socket_address: { address, port_value: port } } },
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
