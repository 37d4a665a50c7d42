/**
 * Clusters (CDS): one EDS cluster per IRCluster, its endpoints over ADS.
 * @module
 */
import type { IRCluster } from "../../../lib/ir/types.ts";
import { DiscoveryType, LbPolicy } from "./enums.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, any, duration } from "./util.ts";

const HTTP_PROTOCOL_OPTIONS = "envoy.extensions.upstreams.http.v3.HttpProtocolOptions";

/** Resolved cluster options. */
export interface ClusterOptions {
  connectTimeoutMs: number;
}

/** Upstream HTTP protocol, explicit: HTTP/2 (prior knowledge, for gRPC/h2c) or HTTP/1.1. */
function protocolOptions(c: IRCluster): Record<string, unknown> {
  const explicit = c.protocol === "http2"
    ? { http2_protocol_options: {} }
    : { http_protocol_options: {} };
  return {
    [HTTP_PROTOCOL_OPTIONS]: any(HTTP_PROTOCOL_OPTIONS, { explicit_http_config: explicit }),
  };
}

/**
 * The upstream transport socket. Plaintext for now; the seam for SPIFFE mTLS to `pod:15008`
 * (UpstreamTlsContext with SDS-served SVID and per-endpoint SAN match) belongs here.
 */
function transportSocket(_c: IRCluster): Record<string, unknown> | undefined {
  return undefined;
}

/** The Envoy Cluster for one IRCluster. */
export function cluster(c: IRCluster, opts: ClusterOptions): NamedResource {
  const resource: Record<string, unknown> = {
    name: c.name,
    type: DiscoveryType.EDS,
    eds_cluster_config: { eds_config: adsConfigSource() },
    connect_timeout: duration(opts.connectTimeoutMs),
    lb_policy: LbPolicy.ROUND_ROBIN,
    typed_extension_protocol_options: protocolOptions(c),
  };
  const ts = transportSocket(c);
  if (ts) resource.transport_socket = ts;
  return { name: c.name, resource };
}
