/**
 * Listeners (LDS): one per IRListener, one Envoy filter chain per IR filter chain, dispatched on
 * its `kind`: an HTTP connection manager that takes its routes over RDS and, for HTTPS, its
 * certificates over SDS; or an L4 chain (l4.ts: TCP proxy, TLS passthrough, UDP proxy).
 * @module
 */
import type { IRFilterChain, IRHttpFilterChain, IRListener } from "../../../lib/ir/mod.ts";
import { CodecType, EscapedSlashes, ForwardClientCert } from "./enums.ts";
import { downstreamTls, tcpProxyChain, tlsPassthroughChain, udpListener } from "./l4.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, any, statName } from "./util.ts";
import { edgeHcmFields, edgeLimitDefaults, type EdgeLimits } from "./edge_limits.ts";
import { hostLowerCaseFilter, onDemandFilter, scopedRoutesField } from "./scoped.ts";

/** Resolved listener options. */
export interface ListenerOptions {
  statPrefix: string;
  edge: boolean;
  /** Limits of edge listeners (used when `edge`). */
  edgeLimits?: EdgeLimits;
  /** Route tables (routeConfigName) served as scoped routes (scoped.ts); none when unset. */
  scopedTables?: ReadonlySet<string>;
  /** Their scopes on demand: the on-demand filter goes before the router. */
  scopedOnDemand?: boolean;
}

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ROUTER = "envoy.extensions.filters.http.router.v3.Router";
const TLS_INSPECTOR = "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector";

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
  chain: IRHttpFilterChain,
  opts: ListenerOptions,
): Record<string, unknown> {
  const scoped = !!opts.scopedTables?.has(chain.routeConfigName);
  const hcm: Record<string, unknown> = {
    ...hcmBase(
      `${opts.statPrefix}_${statName(chain.name)}`,
      chain.routeConfigName,
      scoped
        ? [
          hostLowerCaseFilter(),
          ...(opts.scopedOnDemand ? [onDemandFilter()] : []),
          routerFilter(),
        ]
        : [routerFilter()],
    ),
  };
  if (scoped) {
    delete hcm.rds;
    hcm.scoped_routes = scopedRoutesField(chain.routeConfigName);
  }
  if (opts.edge) {
    // The edge is the trust boundary: the client address is the peer's, XFCC from clients is
    // dropped (the mesh hop adds its own, By= the edge identity, in a later issue).
    hcm.use_remote_address = { value: true };
    hcm.forward_client_cert_details = ForwardClientCert.SANITIZE;
    Object.assign(hcm, edgeHcmFields(opts.edgeLimits ?? edgeLimitDefaults));
  }
  return hcm;
}

function httpFilterChain(
  listener: IRListener,
  chain: IRHttpFilterChain,
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
    out.transport_socket = downstreamTls(chain.certificateSecrets, ["h2", "http/1.1"]);
  }
  return out;
}

/** The Envoy filter chain of one IR filter chain, by its kind. */
function filterChain(
  listener: IRListener,
  chain: Exclude<IRFilterChain, { kind: "udpProxy" }>,
  opts: ListenerOptions,
): Record<string, unknown> {
  switch (chain.kind) {
    case "http":
      return httpFilterChain(listener, chain, opts);
    case "tcpProxy":
      return tcpProxyChain(chain, opts.statPrefix);
    case "tlsPassthrough":
      return tlsPassthroughChain(chain, opts.statPrefix);
  }
}

/** Whether a chain is chosen by SNI, so the listener needs the TLS inspector. */
const needsSni = (l: IRListener) => l.protocol === "HTTPS" || l.protocol === "TLS";

/** The Envoy Listener for one IRListener. */
export function listener(l: IRListener, opts: ListenerOptions): NamedResource {
  const udp = l.filterChains.find((c) => c.kind === "udpProxy");
  if (udp) return udpListener(l, udp, opts.statPrefix);
  const resource: Record<string, unknown> = {
    name: l.name,
    stat_prefix: `${opts.statPrefix}_${statName(l.name)}`,
    address: { socket_address: { address: l.address, port_value: l.port } },
    filter_chains: l.filterChains.map((c) =>
      filterChain(l, c as Exclude<IRFilterChain, { kind: "udpProxy" }>, opts)
    ),
  };
  if (opts.edge) {
    resource.per_connection_buffer_limit_bytes = {
      value: (opts.edgeLimits ?? edgeLimitDefaults).connectionBufferLimitBytes,
    };
  }
  if (needsSni(l)) {
    resource.listener_filters = [{
      name: "envoy.filters.listener.tls_inspector",
      typed_config: any(TLS_INSPECTOR),
    }];
  }
  return { name: l.name, resource };
}
