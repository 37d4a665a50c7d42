/**
 * The node proxy's UDP capture listeners: per pod and captured UDP service port (lib/ir/mesh_udp.ts)
 * one listener `capture-udp|<namespace>/<pod>|<cluster>` on `127.0.0.1:<local port>` (and
 * `[::1]` when the Service has an IPv6 VIP) inside the pod's netns, where the pod's nftables map
 * redirects the port's `VIP . port` datagrams. Its udp_proxy sends them to the caller's UDPRoute
 * cluster (its namespace's consumer route, else the producer's; a weighted route's merged
 * cluster), else to the port's own cluster — from the node proxy's own netns, in plaintext to the
 * endpoint's port (no mTLS tunnel carries datagrams). Each source address:port is a session
 * pinned to the endpoint its first datagram went to until it idles out. Pure.
 * @module
 */
import { callerUdpCluster, type NodePod, type UdpTarget } from "../../../../lib/ir/mod.ts";
import { SocketProtocol } from "../enums.ts";
import { udpProxyFilter } from "../l4.ts";
import type { NamedResource } from "../types.ts";
import { statName } from "../util.ts";
import { type Caller, callerCluster } from "./routes.ts";

/** The UDP capture listener of a pod for one UDP service port. */
export function captureUdpListenerName(
  pod: Pick<NodePod, "namespace" | "name">,
  target: Pick<UdpTarget, "port">,
): string {
  return `capture-udp|${pod.namespace}/${pod.name}|${target.port.cluster}`;
}

/** The clusters the UDP capture listeners of callers in `namespaces` send to. */
export function udpCaptureClusters(
  targets: readonly UdpTarget[],
  namespaces: readonly string[],
): string[] {
  return targets.flatMap((t) => namespaces.flatMap((ns) => callerUdpCluster(t.port, ns) ?? []));
}

/** The UDP capture listeners of one pod, `caller` naming its clusters. */
export function captureUdpListeners(
  pod: NodePod,
  caller: Caller,
  targets: readonly UdpTarget[],
  statPrefix: string,
): NamedResource[] {
  return targets.map((t) => {
    const name = captureUdpListenerName(pod, t);
    const at = (address: string) => ({
      address,
      port_value: t.localPort,
      protocol: SocketProtocol.UDP,
      ...(pod.netnsPath ? { network_namespace_filepath: pod.netnsPath } : {}),
    });
    const cluster = callerUdpCluster(t.port, caller.namespace);
    const stats = `${statPrefix}_capture_udp_${statName(`${pod.namespace}_${pod.name}`)}`;
    return {
      name,
      resource: {
        name,
        stat_prefix: `${statPrefix}_${statName(name)}`,
        address: { socket_address: at("127.0.0.1") },
        ...(t.service.vips.some((v) => v.includes(":"))
          ? { additional_addresses: [{ address: { socket_address: at("::1") } }] }
          : {}),
        listener_filters: [
          udpProxyFilter(stats, cluster && callerCluster(caller, cluster)),
        ],
      },
    };
  });
}
