/**
 * L4 filter chains: TCP proxy (plaintext, or after TLS termination), TLS passthrough by SNI (the
 * connection is never decrypted), and the UDP proxy listener. Weighted backends become a TCP
 * proxy's weighted clusters; an invalid backend names a cluster that does not exist, so its share
 * of connections is refused (the L4 analogue of HTTP's 500).
 * @module
 */
import type {
  IRBackend,
  IRListener,
  IRTcpProxyFilterChain,
  IRTlsPassthroughFilterChain,
  IRUdpProxyFilterChain,
} from "../../../lib/ir/mod.ts";
import { SocketProtocol } from "./enums.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, any, statName } from "./util.ts";

const TCP_PROXY = "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy";
const DOWNSTREAM_TLS = "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";
const UDP_PROXY = "envoy.extensions.filters.udp.udp_proxy.v3.UdpProxyConfig";
const UDP_ROUTE = "envoy.extensions.filters.udp.udp_proxy.v3.Route";
/** Cluster of a chain whose every backend has weight 0: no such cluster, so refused. */
const NO_BACKEND = "aether.invalid/no-backend";

/** Downstream TLS termination with certificates over SDS and the given ALPN protocols. */
export function downstreamTls(secrets: string[], alpn: string[]): Record<string, unknown> {
  const common: Record<string, unknown> = {
    tls_certificate_sds_secret_configs: secrets.map((name) => ({
      name,
      sds_config: adsConfigSource(),
    })),
  };
  if (alpn.length) common.alpn_protocols = [...alpn];
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: any(DOWNSTREAM_TLS, { common_tls_context: common }),
  };
}

/** `cluster` for one carrying backend, else `weighted_clusters` (weight-0 backends dropped). */
export function tcpDestination(backends: readonly IRBackend[]): Record<string, unknown> {
  const carrying = backends.filter((b) => b.weight > 0);
  if (carrying.length === 0) return { cluster: NO_BACKEND };
  if (carrying.length === 1) return { cluster: carrying[0].cluster };
  return {
    weighted_clusters: {
      clusters: carrying.map((b) => ({ name: b.cluster, weight: b.weight })),
    },
  };
}

function tcpProxyFilter(name: string, backends: IRBackend[], statPrefix: string) {
  return {
    name: "envoy.filters.network.tcp_proxy",
    typed_config: any(TCP_PROXY, {
      stat_prefix: `${statPrefix}_${statName(name)}`,
      ...tcpDestination(backends),
    }),
  };
}

/** A proxy chain of `backends`, chosen by `serverNames` when there are any. */
function proxyChain(
  name: string,
  serverNames: string[],
  backends: IRBackend[],
  statPrefix: string,
) {
  const out: Record<string, unknown> = {
    name,
    filters: [tcpProxyFilter(name, backends, statPrefix)],
  };
  if (serverNames.length) out.filter_chain_match = { server_names: [...serverNames] };
  return out;
}

/** A TCP proxy chain; with certificates, TLS is terminated first (matched by SNI). */
export function tcpProxyChain(
  chain: IRTcpProxyFilterChain,
  statPrefix: string,
): Record<string, unknown> {
  const out = proxyChain(chain.name, chain.serverNames, chain.backends, statPrefix);
  if (chain.certificateSecrets.length) {
    out.transport_socket = downstreamTls(chain.certificateSecrets, []);
  }
  return out;
}

/** A TLS passthrough chain: chosen by SNI, bytes proxied as they are (no transport socket). */
export function tlsPassthroughChain(
  chain: IRTlsPassthroughFilterChain,
  statPrefix: string,
): Record<string, unknown> {
  return proxyChain(chain.name, chain.serverNames, chain.backends, statPrefix);
}

/**
 * The UDP listener of a `udpProxy` chain: the udp_proxy listener filter, its matcher routing
 * every datagram to one cluster: the chain's merged `cluster` (several weighted backends, their
 * endpoints weighted by resolve), else its one carrying backend. Each downstream source
 * address:port is a session pinned to the host picked for its first datagram until it idles.
 */
export function udpListener(
  l: IRListener,
  chain: IRUdpProxyFilterChain,
  statPrefix: string,
): NamedResource {
  const carrying = chain.backends.filter((b) => b.weight > 0);
  if (carrying.length > 1 && !chain.cluster) {
    throw new Error(
      `udpProxy chain ${chain.name}: several weighted backends need a merged cluster`,
    );
  }
  const cluster = chain.cluster ?? carrying[0]?.cluster;
  const resource: Record<string, unknown> = {
    name: l.name,
    stat_prefix: `${statPrefix}_${statName(l.name)}`,
    address: {
      socket_address: { address: l.address, port_value: l.port, protocol: SocketProtocol.UDP },
    },
    listener_filters: [udpProxyFilter(`${statPrefix}_${statName(chain.name)}`, cluster)],
  };
  return { name: l.name, resource };
}

/**
 * The udp_proxy listener filter sending every datagram to `cluster` (undefined: a cluster that
 * does not exist, so datagrams are dropped).
 */
export function udpProxyFilter(
  statPrefix: string,
  cluster: string | undefined,
): Record<string, unknown> {
  const route = any(UDP_ROUTE, { cluster: cluster ?? NO_BACKEND });
  return {
    name: "envoy.filters.udp_listener.udp_proxy",
    typed_config: any(UDP_PROXY, {
      stat_prefix: statPrefix,
      matcher: { on_no_match: { action: { name: "route", typed_config: route } } },
    }),
  };
}
