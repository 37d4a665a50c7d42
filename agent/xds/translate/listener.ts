/**
 * Listeners (LDS): one per IRListener, an HTTP connection manager per filter chain that takes its
 * routes over RDS and, for HTTPS, its certificates over SDS.
 * @module
 */
import type { IRFilterChain, IRListener } from "../../../lib/ir/types.ts";
import { CodecType, EscapedSlashes, ForwardClientCert } from "./enums.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, any, statName } from "./util.ts";

/** Resolved listener options. */
export interface ListenerOptions {
  statPrefix: string;
  edge: boolean;
}

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER = "envoy.extensions.filters.http.router.v3.Router";
const TLS_INSPECTOR = "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector";
const DOWNSTREAM_TLS = "envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext";

/** The router HTTP filter, last in every HTTP filter chain. */
export function routerFilter(): Record<string, unknown> {
  return { name: "envoy.filters.http.router", typed_config: any(ROUTER) };
}

/**
 * What every aether HTTP connection manager shares (edge and node proxy): codec AUTO (HTTP/1.1,
 * h2 and h2c), routes over RDS from ADS, `httpFilters` in order, RFC 3986 path normalization.
 */
export function hcmBase(
  statPrefix: string,
  routeConfigName: string,
  httpFilters: Record<string, unknown>[],
): Record<string, unknown> {
  return {
    stat_prefix: statPrefix,
    codec_type: CodecType.AUTO,
    rds: { config_source: adsConfigSource(), route_config_name: routeConfigName },
    http_filters: httpFilters,
    // Route on the path as RFC 3986 normalizes it; `//` collapses; `%2F` is decoded and the
    // client redirected, so a route cannot be bypassed with an escaped slash.
    normalize_path: { value: true },
    merge_slashes: true,
    path_with_escaped_slashes_action: EscapedSlashes.UNESCAPE_AND_REDIRECT,
  };
}

/** The HTTP connection manager of one filter chain (codec AUTO: HTTP/1.1, h2 and h2c). */
export function httpConnectionManager(
  chain: IRFilterChain,
  opts: ListenerOptions,
): Record<string, unknown> {
  const hcm: Record<string, unknown> = {
    ...hcmBase(`${opts.statPrefix}_${statName(chain.name)}`, chain.routeConfigName, [
      routerFilter(),
    ]),
    // Gateway hostnames carry no port: drop it from Host before routing, so redirects write the
    // port only when it is not the scheme's well-known one (see redirectAction).
    strip_any_host_port: true,
  };
  if (opts.edge) {
    // The edge is the trust boundary: the client address is the peer's, XFCC from clients is
    // dropped (the mesh hop adds its own, By= the edge identity, in a later issue).
    hcm.use_remote_address = { value: true };
    hcm.forward_client_cert_details = ForwardClientCert.SANITIZE;
  }
  return hcm;
}

function downstreamTls(chain: IRFilterChain): Record<string, unknown> {
  return {
    name: "envoy.transport_sockets.tls",
    typed_config: any(DOWNSTREAM_TLS, {
      common_tls_context: {
        tls_certificate_sds_secret_configs: chain.certificateSecrets.map((name) => ({
          name,
          sds_config: adsConfigSource(),
        })),
        alpn_protocols: ["h2", "http/1.1"],
      },
    }),
  };
}

function filterChain(
  listener: IRListener,
  chain: IRFilterChain,
  opts: ListenerOptions,
): Record<string, unknown> {
  const out: Record<string, unknown> = {
    name: chain.name,
    filters: [{
      name: "envoy.filters.network.http_connection_manager",
      typed_config: any(HCM, httpConnectionManager(chain, opts)),
    }],
  };
  if (listener.protocol === "HTTPS") {
    if (chain.serverNames.length) {
      out.filter_chain_match = { server_names: [...chain.serverNames] };
    }
    out.transport_socket = downstreamTls(chain);
  }
  return out;
}

/** The Envoy Listener for one IRListener. */
export function listener(l: IRListener, opts: ListenerOptions): NamedResource {
  const resource: Record<string, unknown> = {
    name: l.name,
    stat_prefix: `${opts.statPrefix}_${statName(l.name)}`,
    address: { socket_address: { address: l.address, port_value: l.port } },
    filter_chains: l.filterChains.map((c) => filterChain(l, c, opts)),
  };
  if (l.protocol === "HTTPS") {
    resource.listener_filters = [{
      name: "envoy.filters.listener.tls_inspector",
      typed_config: any(TLS_INSPECTOR),
    }];
  }
  return { name: l.name, resource };
}
