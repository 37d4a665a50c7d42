/**
 * The node proxy's inbound side, per pod: a listener on `podIP:15008` inside the pod's netns that
 * terminates SPIFFE mTLS with the pod's SVID (a client certificate from the trust domain is
 * required; plaintext finds no filter chain and is closed), one filter chain per service port the
 * pod backs, picked by the SNI the caller sends (`<port>.<authority>`), forwarding over plaintext
 * to the pod's target port. XFCC is SANITIZE_SET: whatever a client sent is dropped and the app
 * sees `By=<its own ID>;Hash=…;URI=<caller ID>`. A port that callers may also reach as raw TCP
 * (a capture listener's TCP chain, capture.ts) has a second chain for its SNI, picked by the ALPN
 * `aether-tcp` the caller offers: the same mTLS, then the bytes to the target port (tcp_proxy).
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
import { downstreamMtls, MESH_MTLS_PORT, MESH_TCP_ALPN, meshSni } from "../mtls.ts";
import { oneUriSanFilter } from "../uri_san.ts";
import type { NamedResource } from "../types.ts";
import { clustersetSni } from "../../../../lib/mcs/mod.ts";
import { any, duration, statName } from "../util.ts";

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const TLS_INSPECTOR = "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector";
const TCP_PROXY = "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy";
const HTTP_PROTOCOL_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

function tlsInspector(): Record<string, unknown> {
  return { name: "envoy.filters.listener.tls_inspector", typed_config: any(TLS_INSPECTOR) };
}

/** What the pod backs: per SNI, the target port. */
export interface InboundPort {
  sni: string;
  targetPort: number;
  /**
   * More names the chain is picked by: the clusterset SNI of the Service port
   * (`<port>.<svc>.<ns>.svc.clusterset.local`), which callers in other clusters send when they
   * dial the pod as an endpoint of the ServiceImport (the registry's records carry it), when no
   * chain of the pod has it as its own SNI.
   */
  aliases?: string[];
  /**
   * Callers may also send raw TCP to it (the port is not known HTTP, so a capture listener's TCP
   * chain reaches it): an mTLS connection offering ALPN `aether-tcp` is proxied to the target port
   * as bytes.
   */
  tcp?: boolean;
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
 * gives (SNI of the cluster, endpoint port), marked `tcp` when the cluster is in `tcpClusters`.
 * Sorted by SNI, each once.
 */
export function inboundPorts(
  clusters: readonly IRCluster[],
  tcpClusters: ReadonlySet<string> = new Set(),
): Map<string, InboundPort[]> {
  const out = new Map<string, Map<string, InboundPort>>();
  /** Per pod IP, each Service port's clusterset SNI → the SNI of the chain that takes it too. */
  const aliases = new Map<string, Map<string, string>>();
  for (const c of clusters) {
    const clusterset = serviceClustersetSni(c);
    for (const e of c.endpoints) {
      if (!e.identity) continue;
      const m = out.get(e.address) ?? new Map<string, InboundPort>();
      const sni = meshSni(c);
      const port: InboundPort = { sni, targetPort: e.port };
      if (tcpClusters.has(c.name) || m.get(sni)?.tcp) port.tcp = true;
      m.set(sni, port);
      out.set(e.address, m);
      if (!clusterset) continue;
      const a = aliases.get(e.address) ?? new Map<string, string>();
      if (!a.has(clusterset)) a.set(clusterset, sni);
      aliases.set(e.address, a);
    }
  }
  for (const [ip, a] of aliases) {
    const m = out.get(ip)!;
    for (const [alias, sni] of [...a].sort(([x], [y]) => x < y ? -1 : x > y ? 1 : 0)) {
      if (m.has(alias)) continue;
      const port = m.get(sni)!;
      port.aliases = [...port.aliases ?? [], alias];
    }
  }
  return new Map(
    [...out].map(([ip, m]) => [
      ip,
      [...m].sort(([a], [b]) => a < b ? -1 : a > b ? 1 : 0).map(([, port]) => port),
    ]),
  );
}

/**
 * The SNI an importer in another cluster sends for this port of a Service (`service` is
 * `<ns>/<name>`): its ServiceImport cluster's, `<port>.<name>.<ns>.svc.clusterset.local`.
 * Undefined for a cluster that is itself a ServiceImport's (or has no Service).
 */
function serviceClustersetSni(c: IRCluster): string | undefined {
  if (c.udp || c.sni || c.name.includes(".svc.clusterset.local:")) return undefined;
  const slash = c.service.indexOf("/");
  if (slash < 0) return undefined;
  return clustersetSni(c.service.slice(0, slash), c.service.slice(slash + 1), c.port);
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
      listener_filters: [tlsInspector()],
      filter_chains: ports.flatMap((p) => {
        const names = [p.sni, ...p.aliases ?? []];
        const match = { server_names: names, transport_protocol: "tls" };
        const http = {
          name: p.sni,
          filter_chain_match: match,
          ...inboundChain(pod, podId, trustDomain, p, statPrefix),
        };
        if (!p.tcp) return [http];
        const tcp = {
          name: `${p.sni}|tcp`,
          filter_chain_match: {
            server_names: [...names],
            transport_protocol: "tls",
            application_protocols: [MESH_TCP_ALPN],
          },
          ...inboundTcpChain(pod, podId, trustDomain, p, statPrefix),
        };
        return [http, tcp];
      }),
    },
  };
}

/**
 * The raw-TCP chain of one port (ALPN `aether-tcp`): the same mTLS socket negotiating that ALPN,
 * then the connection's bytes to the target port.
 */
function inboundTcpChain(
  pod: NodePod,
  podId: string,
  trustDomain: string,
  p: InboundPort,
  statPrefix: string,
): Record<string, unknown> {
  const config = {
    stat_prefix: `${statPrefix}_inbound_${statName(`${pod.namespace}_${pod.name}`)}`,
    cluster: inboundClusterName(pod.ip!, p.targetPort),
  };
  return {
    transport_socket: downstreamMtls(podId, trustDomain, [MESH_TCP_ALPN]),
    filters: [{ name: "envoy.filters.network.tcp_proxy", typed_config: any(TCP_PROXY, config) }],
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
 * listener's for that SNI (its HCM stats are the same too), no SNI match (the name picks it). A
 * port that takes raw TCP also has the raw-TCP chain, picked by ALPN (TLS inspector).
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
    const http = { name: p.sni, ...inboundChain(pod, podId, trustDomain, p, statPrefix) };
    const resource: Record<string, unknown> = {
      name,
      stat_prefix: `${statPrefix}_${statName(name)}`,
      internal_listener: {},
      filter_chains: [http],
    };
    if (p.tcp) {
      resource.listener_filters = [tlsInspector()];
      resource.filter_chains = [http, {
        name: `${p.sni}|tcp`,
        filter_chain_match: { application_protocols: [MESH_TCP_ALPN] },
        ...inboundTcpChain(pod, podId, trustDomain, p, statPrefix),
      }];
    }
    return { name, resource };
  });
}

/**
 * The plaintext cluster from the proxy to a pod's target port (STATIC, pod IP). HTTP goes to the
 * app in the protocol it came in (a gRPC or h2c caller's HTTP/2 stays HTTP/2); raw TCP (the
 * floor's tcp_proxy) is bytes either way.
 */
export function inboundCluster(ip: string, port: number, connectTimeoutMs: number): NamedResource {
  const c = staticCluster(inboundClusterName(ip, port), connectTimeoutMs, [{ address: ip, port }]);
  c.resource.typed_extension_protocol_options = {
    [HTTP_PROTOCOL_OPTIONS]: any(HTTP_PROTOCOL_OPTIONS, {
      use_downstream_protocol_config: { http_protocol_options: {}, http2_protocol_options: {} },
    }),
  };
  return c;
}
