/**
 * Mesh UDP on the capture path, pure over the MeshIR: which UDP service ports are captured (those
 * with a UDPRoute, producer or consumer, on a Service with a cluster IP) and the local port each
 * gets in every pod netns. UDP carries no original destination a listener could read, so each
 * captured UDP service port has a loopback port of its own: the pod's nftables map sends
 * `VIP . port` there, and the node proxy's UDP listener on it forwards to the caller's route.
 * The capture spec (agent/capture/mesh_spec.ts) and the node translation share this list.
 * @module
 */
import {
  callerUdpRoute,
  hasUdpRoutes,
  type MeshIR,
  type MeshService,
  type MeshServicePort,
  type MeshUdpRoute,
} from "./mesh.ts";

/** The first local port of the UDP listeners in each pod netns. */
export const UDP_LOCAL_PORT_BASE = 15100;

/** How many UDP service ports are captured at most (local ports 15100–15999). */
export const UDP_LOCAL_PORT_COUNT = 900;

/** One captured UDP service port. */
export interface UdpTarget {
  service: MeshService;
  port: MeshServicePort;
  /** Its loopback port in each pod netns. */
  localPort: number;
}

/** A port's UDPRoutes: the producer's, then each caller namespace's. */
export function portUdpRoutes(port: MeshServicePort): MeshUdpRoute[] {
  return [
    ...(port.producerUdp ? [port.producerUdp] : []),
    ...Object.values(port.consumerUdp ?? {}),
  ];
}

/**
 * The captured UDP service ports, by authority then port order, local ports counted up from
 * {@link UDP_LOCAL_PORT_BASE}; past {@link UDP_LOCAL_PORT_COUNT} ports the rest are not captured
 * (they reach kube-proxy as before).
 */
export function udpTargets(mesh: Pick<MeshIR, "services">): UdpTarget[] {
  const out: UdpTarget[] = [];
  for (const service of mesh.services) {
    if (service.vips.length === 0) continue;
    for (const port of service.ports) {
      if (port.protocol !== "UDP" || !hasUdpRoutes(port)) continue;
      if (out.length === UDP_LOCAL_PORT_COUNT) return out;
      out.push({ service, port, localPort: UDP_LOCAL_PORT_BASE + out.length });
    }
  }
  return out;
}

/**
 * The cluster a caller in `namespace` sends a UDP service port's datagrams to: its UDPRoute's
 * cluster (its namespace's consumer route, else the producer's), else the port's own cluster;
 * undefined when its route has no backend carrying weight.
 */
export function callerUdpCluster(port: MeshServicePort, namespace: string): string | undefined {
  const route = callerUdpRoute(port, namespace);
  return route ? route.cluster : port.cluster;
}

/** A UDPRoute's merged cluster: its cluster when no backend has it (several carry weight). */
export function mergedUdpClusterOf(route: MeshUdpRoute): string | undefined {
  const c = route.cluster;
  return c && !route.backends.some((b) => b.cluster === c) ? c : undefined;
}

/**
 * The clusters a service port owns: its own, and the merged clusters of its UDPRoutes (a weighted
 * route's cluster, which no backend has; its endpoints change with the backends', under this
 * port's service).
 */
export function portOwnedClusters(port: MeshServicePort): string[] {
  const out = [port.cluster];
  for (const r of portUdpRoutes(port)) {
    const merged = mergedUdpClusterOf(r);
    if (merged) out.push(merged);
  }
  return out;
}

/**
 * The services whose endpoints the UDP capture listeners send to: each captured UDP port's
 * service (its own and merged clusters) and the services its routes' backends belong to
 * (`clusterAuthority`: cluster name → owning service's authority). A node proxy with capture
 * watches them all, since its UDP clusters are always there.
 */
export function udpAuthorities(
  targets: readonly UdpTarget[],
  clusterAuthority: ReadonlyMap<string, string>,
): string[] {
  const out = new Set<string>();
  for (const t of targets) {
    out.add(t.service.authority);
    for (const r of portUdpRoutes(t.port)) {
      for (const b of r.backends) {
        const owner = clusterAuthority.get(b.cluster);
        if (owner) out.add(owner);
      }
    }
  }
  return [...out].sort();
}
