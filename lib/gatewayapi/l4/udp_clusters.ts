/**
 * Weighted UDPRoute backends: Envoy's udp_proxy routes a listener's datagrams to one cluster, so
 * the valid backends of a chain with several carrying ones are merged into one cluster whose
 * endpoints are weighted so that each backend gets its weight's share of sessions (endpoint
 * weight = backend weight × 1000 / its endpoint count). An invalid backend cannot keep a share
 * there: its sessions go to the valid backends.
 * @module
 */
import type { IRCluster, IREndpoint, IRListener } from "../../ir/mod.ts";

const SCALE = 1000;

/** The merged cluster of a UDP chain (a name no Service cluster can have). */
export const udpClusterName = (chain: string): string => `aether.udp/${chain}`;

/**
 * Sets `cluster` on every UDP chain with several carrying backends and returns the merged
 * clusters, built from the backends' clusters in `clusters`.
 */
export function mergeUdpBackends(listeners: IRListener[], clusters: IRCluster[]): IRCluster[] {
  const byName = new Map(clusters.map((c) => [c.name, c]));
  const out: IRCluster[] = [];
  for (const l of listeners) {
    for (const chain of l.filterChains) {
      if (chain.kind !== "udpProxy") continue;
      const carrying = chain.backends.filter((b) => b.weight > 0);
      if (carrying.length < 2) continue;
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
      chain.cluster = udpClusterName(chain.name);
      out.push({
        name: chain.cluster,
        service: chain.name,
        port: l.port,
        protocol: "http1",
        endpoints: [...endpoints.values()].sort((a, b) =>
          a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port
        ),
      });
    }
  }
  return out;
}
