/**
 * The registry's endpoint records of every origin → one ClusterSetEndpoints object per imported
 * service (pure): what resolve turns into a ServiceImport's clusters. Endpoints of the agent's
 * own cluster get priority 0, every other cluster's 1 (locality first, failover across clusters).
 * @module
 */
import { parseEndpointRecord } from "./endpoints.ts";

/** The API version of ClusterSetEndpoints objects (an aether node-local kind). */
export const CLUSTER_SET_ENDPOINTS_API = "aether.io/v1alpha1";

/** One endpoint of a ClusterSetEndpoints object (resolve's ClusterSetEndpoint). */
export interface ClusterSetEndpointEntry {
  cluster: string;
  address: string;
  /** Target ports by name; `servicePort`: the exporting cluster's Service port (when known). */
  ports: { name: string; protocol: string; port: number; servicePort?: number }[];
  zone?: string;
  identity?: string;
  priority: number;
  /**
   * Another cluster's east-west gateway (`<ip>:<port>`) this endpoint is dialled through; never
   * set for the agent's own cluster (its pods are reached directly).
   */
  gateway?: string;
}

/**
 * The endpoints of every imported service (`<ns>/<svc>` →, sorted by cluster then address) from
 * the `eps/…` values of every visible origin; malformed values are counted in `skipped`.
 */
export function clusterSetEndpoints(
  values: Iterable<string>,
  ownCluster: string,
): { byService: Map<string, ClusterSetEndpointEntry[]>; skipped: number } {
  const byService = new Map<string, ClusterSetEndpointEntry[]>();
  let skipped = 0;
  for (const value of values) {
    const r = parseEndpointRecord(value);
    if (!r) {
      skipped++;
      continue;
    }
    const key = `${r.namespace}/${r.service}`;
    const list = byService.get(key) ?? [];
    list.push({
      cluster: r.cluster,
      address: r.ip,
      ports: r.ports,
      ...(r.zone ? { zone: r.zone } : {}),
      ...(r.spiffeId ? { identity: r.spiffeId } : {}),
      priority: r.cluster === ownCluster ? 0 : 1,
      ...(r.gateway && r.cluster !== ownCluster ? { gateway: r.gateway } : {}),
    });
    byService.set(key, list);
  }
  for (const list of byService.values()) {
    list.sort((a, b) =>
      a.cluster < b.cluster
        ? -1
        : a.cluster > b.cluster
        ? 1
        : a.address < b.address
        ? -1
        : a.address > b.address
        ? 1
        : 0
    );
  }
  return { byService, skipped };
}
