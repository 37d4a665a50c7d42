/**
 * The node proxy's inbound side, per pod: a listener on `podIP:15008` inside the pod's netns that
 * terminates SPIFFE mTLS with the pod's SVID (a client certificate from the trust domain is
 * required; plaintext finds no filter chain and is closed), one filter chain per service port the
 * pod backs, picked by the SNI the caller sends (`<port>.<authority>`), forwarding over plaintext
 * to the pod's target port. XFCC is SANITIZE_SET: whatever a client sent is dropped and the app
 * sees `By=<its own ID>;Hash=…;URI=<caller ID>`.
 *
 * Same-node callers: each (pod, SNI) also gets an internal (user-space) listener
 * `inbound-internal|<podIP>|<sni>` with the same mTLS socket and HTTP connection manager, which
 * local.ts points this node's endpoints of that pod at. The hop keeps its mTLS, XFCC and checks
 * but stays on the caller's Envoy worker thread, without the kernel's TCP stack.
 * @module
 */
import type { NodePod } from "../../../../lib/ir/mod.ts";
import type { IRCluster } from "../../../../lib/ir/mod.ts";
import { CodecType, ForwardClientCert } from "../enums.ts";
import { staticCluster } from "../cluster.ts";
import { routerFilter } from "../listener.ts";
import { downstreamMtls, MESH_MTLS_PORT, meshSni } from "../mtls.ts";
import { oneUriSanFilter } from "../uri_san.ts";
import type { NamedResource } from "../types.ts";
import { any, duration, statName } from "../util.ts";

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const TLS_INSPECTOR = "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector";

/** What the pod backs: per SNI, the target port. */
export interface InboundPort {
  sni: string;
  targetPort: number;
}

/** Inbound listener name of a pod: `inbound|<namespace>/<pod>`. */
export function inboundListenerName(pod: Pick<NodePod, "namespace" | "name">): string {
  return `inbound|${pod.namespace}/${pod.name}`;
}

/** Name prefix of the internal inbound listeners. */
export const INBOUND_INTERNAL_PREFIX = "inbound-internal|";

/** The internal listener of a pod IP's inbound chain for `sni`: `inbound-internal|<ip>|<sni>`. */
export function inboundInternalListenerName(ip: string, sni: string): string {
  return `${INBOUND_INTERNAL_PREFIX}${ip}|${sni}`;
}

/** Inbound (plaintext, pod-local) cluster name: `inbound|<ip>:<port>`. */
export function inboundClusterName(ip: string, port: number): string {
  return `inbound|${ip}:${port}`;
}

/**
 * For every pod IP, the ports it backs: each cluster endpoint with an identity at that address
 * gives (SNI of the cluster, endpoint port). Sorted by SNI, each once.
 */
export function inboundPorts(clusters: readonly IRCluster[]): Map<string, InboundPort[]> {
  const out = new Map<string, Map<string, number>>();
  for (const c of clusters) {
    for (const e of c.endpoints) {
      if (!e.identity) continue;
      const m = out.get(e.address) ?? new Map<string, number>();
      m.set(meshSni(c), e.port);
      out.set(e.address, m);
    }
  }
  return new Map(
    [...out].map(([ip, m]) => [
      ip,
      [...m].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([sni, targetPort]) => ({
        sni,
        targetPort,
      })),
    ]),
  );
}

function inboundHcm(pod: NodePod, p: InboundPort, statPrefix: string): Record<string, unknown> {
  const cluster = inboundClusterName(pod.ip!, p.targetPort);
  return {
    stat_prefix: `${statPrefix}_inbound_${statName(`${pod.namespace}_${pod.name}_${p.sni}`)}`,
    codec_type: CodecType.AUTO,
    route_config: {
      name: `inbound|${pod.namespace}/${pod.name}|${p.sni}`,
      virtual_hosts: [{
        name: "inbound",
        domains: ["*"],
        routes: [{ match: { prefix: "/" }, route: { cluster, timeout: duration(0) } }],
      }],
    },
    http_filters: [oneUriSanFilter(), routerFilter()],
    forward_client_cert_details: ForwardClientCert.SANITIZE_SET,
    set_current_client_cert_details: { uri: true },
    normalize_path: { value: true },
  };
}

/** The inbound listener of one pod (needs `pod.ip`), or undefined when it backs nothing. */
export function inboundListener(
  pod: NodePod,
  podId: string,
  trustDomain: string,
  ports: readonly InboundPort[],
  statPrefix: string,
): NamedResource | undefined {
  if (!pod.ip || ports.length === 0) return undefined;
  const name = inboundListenerName(pod);
  const socketAddress: Record<string, unknown> = { address: pod.ip, port_value: MESH_MTLS_PORT };
  if (pod.netnsPath) socketAddress.network_namespace_filepath = pod.netnsPath;
  return {
    name,
    resource: {
      name,
      stat_prefix: `${statPrefix}_${statName(name)}`,
      address: { socket_address: socketAddress },
      listener_filters: [{
        name: "envoy.filters.listener.tls_inspector",
        typed_config: any(TLS_INSPECTOR),
      }],
      filter_chains: ports.map((p) => ({
        name: p.sni,
        filter_chain_match: { server_names: [p.sni], transport_protocol: "tls" },
        ...inboundChain(pod, podId, trustDomain, p, statPrefix),
      })),
    },
  };
}

/** What the TCP and the internal inbound chain of one port share: mTLS socket and HCM. */
function inboundChain(
  pod: NodePod,
  podId: string,
  trustDomain: string,
  p: InboundPort,
  statPrefix: string,
): Record<string, unknown> {
  return {
    transport_socket: downstreamMtls(podId, trustDomain),
    filters: [{
      name: "envoy.filters.network.http_connection_manager",
      typed_config: any(HCM, inboundHcm(pod, p, statPrefix)),
    }],
  };
}

/**
 * The internal listeners of one pod (needs `pod.ip`): one per port, the same chain as the TCP
 * listener's for that SNI (its HCM stats are the same too), no SNI match (the name picks it).
 */
export function inboundInternalListeners(
  pod: NodePod,
  podId: string,
  trustDomain: string,
  ports: readonly InboundPort[],
  statPrefix: string,
): NamedResource[] {
  if (!pod.ip) return [];
  return ports.map((p) => {
    const name = inboundInternalListenerName(pod.ip!, p.sni);
    return {
      name,
      resource: {
        name,
        stat_prefix: `${statPrefix}_${statName(name)}`,
        internal_listener: {},
        filter_chains: [{ name: p.sni, ...inboundChain(pod, podId, trustDomain, p, statPrefix) }],
      },
    };
  });
}

/** The plaintext cluster from the proxy to a pod's target port (STATIC, pod IP). */
export function inboundCluster(ip: string, port: number, connectTimeoutMs: number): NamedResource {
  return staticCluster(inboundClusterName(ip, port), connectTimeoutMs, [{ address: ip, port }]);
}
