/**
 * The node proxy's capture listeners, one per pod: `capture|<namespace>/<pod>` on
 * `127.0.0.1:<port>` (15001) inside the pod's netns, where the pod's nftables rules REDIRECT its
 * TCP to mesh VIP:ports (and on `[::1]:<port>` too when a VIP is IPv6). The listener filters restore the dialled address (`original_dst`) and,
 * for sniffed ports only, detect TLS and HTTP; the filter chain matcher (capture_match.ts) then
 * picks the service port's chain by the dialled VIP:port — never by the Host header:
 *
 * - HTTP chain `<cluster>|http`: a connection manager on the RouteConfiguration
 *   `capture.<caller>/<cluster>` (RDS), one virtual host `*` holding that port's GAMMA routes for
 *   the caller (its namespace's consumer routes, else the producer routes; with identity the
 *   caller is the pod's (namespace, service account)). Per request, so weights split the requests
 *   of one connection. A route edit is an RDS update: the listener and its connections stay.
 * - TCP chain `<cluster>|tcp`: tcp_proxy to the port's (caller) cluster, or — when a TCPRoute is
 *   on the port for the caller (its namespace's consumer TCPRoute, else the producer's) — to the
 *   route's backends by weight, per connection (a port with a TCPRoute has only this chain). With
 *   identity that
 *   cluster dials SPIFFE mTLS to the endpoint's `podIP:15008` offering ALPN `aether-tcp` (set on
 *   the connection's filter state), which picks the inbound listener's raw-TCP chain for the SNI
 *   (inbound.ts): the TCP-over-mTLS floor. Without identity it dials the endpoint in plaintext.
 * - TLS chains `<cluster>|tls|<i>` on a port with TLSRoutes: the caller's `i`th TLSRoute, picked
 *   by the connection's SNI (capture_match.ts), tcp_proxy to its backends by weight; a name no
 *   route holds goes to the port's TCP chain.
 * - `passthrough`: whatever is no captured VIP:port (a pod IP, an outside address) goes to the
 *   address it was dialled at, through the ORIGINAL_DST cluster `capture-passthrough`, with no
 *   route.
 *
 * Clusters come on demand: route tables and chains exist for every VIP service port, but a
 * cluster outside the node's dependency set is fetched over on-demand CDS (the HTTP on_demand
 * filter's and tcp_proxy's `odcds`) by the first request or connection that needs it, which waits
 * for it (and its endpoints) instead of failing.
 * @module
 */
import {
  callerTcpBackends,
  callerTlsRoutes,
  type IRBackend,
  type MeshServicePort,
  type NodePod,
} from "../../../../lib/ir/mod.ts";
import { DiscoveryType, LbPolicy } from "../enums.ts";
import { hcmBase, routerFilter } from "../listener.ts";
import { MESH_TCP_ALPN } from "../mtls.ts";
import { tcpDestination } from "../l4.ts";
import type { NamedResource } from "../types.ts";
import { adsConfigSource, any, duration, statName } from "../util.ts";
import {
  captureMatcher,
  type CaptureTarget,
  inspectorsDisabled,
  sniffedPorts,
  targetChains,
  tlsChainName,
} from "./capture_match.ts";
import { ON_DEMAND_FILTER } from "./listener.ts";
import { type Caller, callerCluster, callerPortRoutes, meshRetryFloor } from "./routes.ts";

const HCM = "envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager";
const ON_DEMAND = "envoy.extensions.filters.http.on_demand.v3.OnDemand";
const TCP_PROXY = "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy";
const SET_FILTER_STATE = "envoy.extensions.filters.network.set_filter_state.v3.Config";
const LISTENER_FILTERS = "envoy.extensions.filters.listener";

/** The pass-through chain's name. */
export const PASSTHROUGH_CHAIN = "passthrough";

/** The ORIGINAL_DST cluster of the pass-through chain. */
export const PASSTHROUGH_CLUSTER = "capture-passthrough";

/** Resolved options of the capture listeners. */
export interface CaptureListenerOptions {
  statPrefix: string;
  /** The port inside each pod its nftables rules redirect to (15001). */
  port: number;
  /** How long the inspectors wait for a sniffed port's first bytes before TCP. */
  detectionTimeoutMs: number;
  /** How long a request or connection waits for an on-demand cluster. */
  odcdsTimeoutMs: number;
  /** The mesh has identity: TCP chains ask the inbound side for raw TCP (ALPN). */
  identity: boolean;
}

/** The capture listener name of a pod: `capture|<namespace>/<pod>`. */
export function captureListenerName(pod: Pick<NodePod, "namespace" | "name">): string {
  return `capture|${pod.namespace}/${pod.name}`;
}

/**
 * The RouteConfiguration (RDS) of a caller's HTTP chain for one service port:
 * `capture.<caller>/<cluster>`, the caller being the namespace or `<namespace>/<sa>`.
 */
export function captureRouteName(caller: string, cluster: string): string {
  return `capture.${caller}/${cluster}`;
}

/**
 * The route table of one service port for `caller`: one virtual host matching every Host (the
 * dialled address chose the port already), with the caller's routes of that port.
 */
export function captureRouteConfiguration(caller: Caller, port: MeshServicePort): NamedResource {
  const name = captureRouteName(caller.key, port.cluster);
  return {
    name,
    resource: {
      name,
      virtual_hosts: [{
        name,
        domains: ["*"],
        routes: callerPortRoutes(port, caller),
        retry_policy: meshRetryFloor(),
      }],
      // Invalid backends name missing clusters on purpose (they answer 500), so never reject.
      validate_clusters: { value: false },
    },
  };
}

/** The ORIGINAL_DST cluster: upstream = the address the connection was dialled at. */
export function passthroughCluster(connectTimeoutMs: number): NamedResource {
  return {
    name: PASSTHROUGH_CLUSTER,
    resource: {
      name: PASSTHROUGH_CLUSTER,
      type: DiscoveryType.ORIGINAL_DST,
      lb_policy: LbPolicy.CLUSTER_PROVIDED,
      connect_timeout: duration(connectTimeoutMs),
    },
  };
}

function tcpProxy(
  statPrefix: string,
  to: string | readonly IRBackend[],
  odcdsTimeoutMs?: number,
): Obj {
  const config: Obj = {
    stat_prefix: statPrefix,
    ...(typeof to === "string" ? { cluster: to } : tcpDestination(to)),
  };
  if (odcdsTimeoutMs !== undefined) {
    config.on_demand = { odcds_config: adsConfigSource(), timeout: duration(odcdsTimeoutMs) };
  }
  return { name: "envoy.filters.network.tcp_proxy", typed_config: any(TCP_PROXY, config) };
}

/** Sets the upstream ALPN of the connection's TLS (what the inbound side picks raw TCP by). */
function tcpAlpn(): Obj {
  return {
    name: "envoy.filters.network.set_filter_state",
    typed_config: any(SET_FILTER_STATE, {
      on_new_connection: [{
        object_key: "envoy.network.application_protocols",
        format_string: { text_format_source: { inline_string: MESH_TCP_ALPN } },
      }],
    }),
  };
}

type Obj = Record<string, unknown>;

function chains(t: CaptureTarget, caller: Caller, stats: string, o: CaptureListenerOptions): Obj[] {
  const { http, tcp } = targetChains(t);
  const out: Obj[] = [];
  const odcds = { source: adsConfigSource(), timeout: duration(o.odcdsTimeoutMs) };
  if (http) {
    const hcm = hcmBase(stats, captureRouteName(caller.key, t.port.cluster), [
      { name: ON_DEMAND_FILTER, typed_config: any(ON_DEMAND, { odcds }) },
      routerFilter(),
    ]);
    out.push({
      name: http,
      filters: [{
        name: "envoy.filters.network.http_connection_manager",
        typed_config: any(HCM, hcm),
      }],
    });
  }
  // The caller's TLSRoutes on a TLS port: a chain each, its connections by weight (never decrypted).
  if (t.protocol === "tls") {
    callerTlsRoutes(t.port, caller.namespace).forEach((r, i) => {
      const to = r.backends.map((b) => ({ ...b, cluster: callerCluster(caller, b.cluster) }));
      const proxy = tcpProxy(stats, to, o.odcdsTimeoutMs);
      out.push({
        name: tlsChainName(t.port, i),
        filters: o.identity ? [tcpAlpn(), proxy] : [proxy],
      });
    });
  }
  if (tcp) {
    // The caller's TCPRoute splits connections by weight; else the floor to the port's cluster.
    const routed = callerTcpBackends(t.port, caller.namespace);
    const to = routed
      ? routed.map((b) => ({ ...b, cluster: callerCluster(caller, b.cluster) }))
      : callerCluster(caller, t.port.cluster);
    const proxy = tcpProxy(stats, to, o.odcdsTimeoutMs);
    out.push({ name: tcp, filters: o.identity ? [tcpAlpn(), proxy] : [proxy] });
  }
  return out;
}

function listenerFilter(name: string, type: string, disabled?: Obj): Obj {
  const out: Obj = { name: `envoy.filters.listener.${name}`, typed_config: any(type) };
  if (disabled) out.filter_disabled = disabled;
  return out;
}

/**
 * The capture listener of one pod for `targets` (captureTargets), `caller` naming its route
 * tables and clusters. A pod without a netns path binds in Envoy's own namespace.
 */
export function captureListener(
  pod: NodePod,
  caller: Caller,
  targets: readonly CaptureTarget[],
  o: CaptureListenerOptions,
): NamedResource {
  const name = captureListenerName(pod);
  const at = (address: string): Obj => ({
    address,
    port_value: o.port,
    ...(pod.netnsPath ? { network_namespace_filepath: pod.netnsPath } : {}),
  });
  // One stat prefix per pod: per-chain prefixes would make every chain's counters.
  const stats = `${o.statPrefix}_capture_${statName(`${pod.namespace}_${pod.name}`)}`;
  // tls_inspector on sniffed ports and on TLS ports (their SNI picks the chain), http_inspector
  // on sniffed ports only.
  const sniffed = sniffedPorts(targets), withSni = sniffedPorts(targets, true);
  const listenerFilters = [
    listenerFilter("original_dst", `${LISTENER_FILTERS}.original_dst.v3.OriginalDst`),
  ];
  if (withSni.length) {
    listenerFilters.push(
      listenerFilter(
        "tls_inspector",
        `${LISTENER_FILTERS}.tls_inspector.v3.TlsInspector`,
        inspectorsDisabled(withSni),
      ),
    );
  }
  if (sniffed.length) {
    listenerFilters.push(
      listenerFilter(
        "http_inspector",
        `${LISTENER_FILTERS}.http_inspector.v3.HttpInspector`,
        inspectorsDisabled(sniffed),
      ),
    );
  }
  const matcher = captureMatcher(
    targets,
    PASSTHROUGH_CHAIN,
    (t) => callerTlsRoutes(t.port, caller.namespace).map((r) => r.hostnames),
  );
  const filterChains = [
    ...targets.flatMap((t) => chains(t, caller, stats, o)),
    { name: PASSTHROUGH_CHAIN, filters: [tcpProxy(stats, PASSTHROUGH_CLUSTER)] },
  ].sort((a, b) => (a.name as string) < (b.name as string) ? -1 : 1);
  return {
    name,
    resource: {
      name,
      stat_prefix: `${o.statPrefix}_${statName(name)}`,
      address: { socket_address: at("127.0.0.1") },
      // IPv6 VIPs are redirected to [::1]:<port> (only listened on when there is one: a pod
      // netns without IPv6 could not bind it).
      ...(targets.some((t) => t.service.vips.some((v) => v.includes(":")))
        ? { additional_addresses: [{ address: { socket_address: at("::1") } }] }
        : {}),
      listener_filters: listenerFilters,
      listener_filters_timeout: duration(o.detectionTimeoutMs),
      continue_on_listener_filters_timeout: true,
      filter_chains: filterChains,
      ...(matcher ? { filter_chain_matcher: matcher } : {}),
    },
  };
}
