/**
 * Clusters (CDS): one EDS cluster per IRCluster, its endpoints over ADS.
 * @module
 */
import type { IRCluster } from "../../../lib/ir/mod.ts";
import { DiscoveryType, LbPolicy } from "./enums.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, any, duration } from "./util.ts";
import { clusterMtls } from "./mtls.ts";
import { upstreamOneUriSanFilters } from "./uri_san.ts";

const HTTP_PROTOCOL_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

/** Resolved cluster options. */
export interface ClusterOptions {
  connectTimeoutMs: number;
  /**
   * Dial endpoints that have an identity over SPIFFE mTLS presenting `callerId`'s SVID (see
   * mtls.ts). Absent: plaintext.
   */
  mtls?: { callerId: string; trustDomain: string };
  /** Cluster name when it differs from the IR name (per-caller clusters); EDS keeps the IR name. */
  name?: string;
}

/**
 * Upstream HTTP protocol, explicit: HTTP/2 (prior knowledge, for gRPC/h2c) or HTTP/1.1. An mTLS
 * cluster also gets the upstream filters that refuse a server certificate with more than one URI
 * SAN (uri_san.ts).
 */
function protocolOptions(c: IRCluster, mtls: boolean): Record<string, unknown> {
  const explicit = c.protocol === "http2"
    ? { http2_protocol_options: {} }
    : { http_protocol_options: {} };
  const opts: Record<string, unknown> = { explicit_http_config: explicit };
  if (mtls) opts.http_filters = upstreamOneUriSanFilters();
  return { [HTTP_PROTOCOL_OPTIONS]: any(HTTP_PROTOCOL_OPTIONS, opts) };
}

/**
 * The fields of an EDS cluster that depend only on its protocol, whether it dials mTLS and the
 * connect timeout (and the EDS config, when the cluster is named as its service).
 */
export interface ClusterParts {
  readonly eds: Record<string, unknown>;
  readonly connectTimeout: ReturnType<typeof duration>;
  readonly protocolOptions: Record<string, unknown>;
}

/** The key of the {@link ClusterParts} `c` gets with `opts`. */
export const clusterPartsKey = (c: IRCluster, opts: ClusterOptions): string =>
  `${c.protocol}|${opts.mtls !== undefined && !c.udp}|${opts.connectTimeoutMs}`;

/** New {@link ClusterParts} for `c` with `opts` (the same for every cluster of the same key). */
export function clusterParts(c: IRCluster, opts: ClusterOptions): ClusterParts {
  return {
    eds: { eds_config: adsConfigSource() },
    connectTimeout: duration(opts.connectTimeoutMs),
    protocolOptions: protocolOptions(c, opts.mtls !== undefined && !c.udp),
  };
}

/**
 * The Envoy Cluster for one IRCluster. With `mtls`, endpoints with an identity are matched by
 * their metadata to an mTLS socket expecting that identity (transport_socket_matches). `parts`,
 * when given, are {@link clusterParts} of the same key, shared by the clusters a caller makes
 * (read-only): the snapshot then encodes them once (agent/xds/cache/templates.ts).
 */
export function cluster(
  c: IRCluster,
  opts: ClusterOptions,
  parts: ClusterParts = clusterParts(c, opts),
): NamedResource {
  const name = opts.name ?? c.name;
  const resource: Record<string, unknown> = {
    name,
    type: DiscoveryType.EDS,
    eds_cluster_config: name === c.name ? parts.eds : { ...parts.eds, service_name: c.name },
    connect_timeout: parts.connectTimeout,
    lb_policy: LbPolicy.ROUND_ROBIN,
    typed_extension_protocol_options: parts.protocolOptions,
  };
  // A UDP cluster's datagrams are sent as they are (udp_proxy uses no transport socket).
  if (opts.mtls && !c.udp) {
    Object.assign(resource, clusterMtls(c, opts.mtls.callerId, opts.mtls.trustDomain));
  }
  return { name, resource };
}

/** A STATIC cluster of these addresses, round robin. */
export function staticCluster(
  name: string,
  connectTimeoutMs: number,
  addresses: readonly { address: string; port: number }[],
): NamedResource {
  const lbEndpoints = addresses.map(({ address, port }) => ({
    endpoint: { address: { socket_address: { address, port_value: port } } },
  }));
  return {
    name,
    resource: {
      name,
      type: DiscoveryType.STATIC,
      connect_timeout: duration(connectTimeoutMs),
      lb_policy: LbPolicy.ROUND_ROBIN,
      load_assignment: {
        cluster_name: name,
        endpoints: lbEndpoints.length ? [{ lb_endpoints: lbEndpoints }] : [],
      },
    },
  };
}

/**
 * A cluster that refuses: no endpoints (every request gets 503, no healthy upstream) and no
 * transport socket, hence no certificate and no EDS subscription. It stands in for a cluster
 * that may not be used now (a caller identity without an SVID), under the same name, so routes
 * keep resolving and Envoy, replacing the cluster, closes the old one's connections.
 */
export function refusingCluster(name: string, connectTimeoutMs: number): NamedResource {
  return staticCluster(name, connectTimeoutMs, []);
}
