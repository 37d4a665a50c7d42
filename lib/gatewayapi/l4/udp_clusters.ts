/**
 * Weighted UDPRoute backends: Envoy's udp_proxy routes a listener's datagrams to one cluster, so
 * the valid backends of a chain with several carrying ones are merged into one cluster whose
 * endpoints are weighted so that each backend gets its weight's share of sessions (endpoint
 * weight = backend weight × 1000 / its endpoint count). An invalid backend cannot keep a share
 * there: its sessions go to the valid backends. The edge's UDP listeners and the mesh's UDPRoutes
 * on Service ports merge alike.
 * @module
 */
import type { IRBackend, IRCluster, IREndpoint, IRListener } from "../../ir/mod.ts";

const SCALE = 1000;

/** The merged cluster of a UDP chain (a name no Service cluster can have). */
export const udpClusterName = (chain: string): string => `aether.udp/${chain}`;

/**
 * The merged cluster `name` of `backends` (looked up in `byName`), or undefined when fewer than
 * two carry weight (one backend's own cluster serves then).
 */
export function mergedUdpCluster(
  name: string,
  service: string,
  port: number,
  backends: readonly IRBackend[],
  byName: ReadonlyMap<string, IRCluster>,
): IRCluster | undefined {
  const carrying = backends.filter((b) => b.weight > 0);
  if (carrying.length < 2) return undefined;
  const endpoints = new Map<string, IREndpoint>();
  for (const b of carrying) {
    const c = b.invalid ? undefined : byName.get(b.cluster);
    if (!c || c.endpoints.length === 0) continue;
    const weight = Math.max(1, Math.round((b.weight * SCALE) / c.endpoints.length));
    for (const e of c.endpoints) {
      const key = `${e.address}|${e.port}`;
      const seen = endpoints.get(key);
      if (seen) seen.weight = (seen.weight ?? 0) + weight;
      else endpoints.set(key, { ...e, weight });
    }
  }
  return {
    name,
    service,
    port,
    protocol: "http1",
    endpoints: [...endpoints.values()].sort((a, b) =>
      a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port
    ),
    udp: true,
  };
}

/**
 * Sets `cluster` on every UDP chain with several carrying backends and returns the merged
 * clusters, built from the backends' clusters in `clusters`.
 */
export function mergeUdpBackends(listeners: IRListener[], clusters: IRCluster[]): IRCluster[] {
  // Made on the first UDP chain: most configurations have none, and thousands of clusters.
  let byName: Map<string, IRCluster> | undefined;
  const out: IRCluster[] = [];
  for (const l of listeners) {
    for (const chain of l.filterChains) {
      if (chain.kind !== "udpProxy") continue;
      byName ??= new Map(clusters.map((c) => [c.name, c]));
      const name = udpClusterName(chain.name);
      const merged = mergedUdpCluster(name, chain.name, l.port, chain.backends, byName);
      if (!merged) continue;
      chain.cluster = name;
      out.push(merged);
    }
  }
  return out;
}
