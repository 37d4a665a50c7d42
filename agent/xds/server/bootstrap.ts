/**
 * The Envoy bootstrap that points an Envoy at aether's ADS server: node identity, ADS over gRPC
 * (SotW or delta), LDS and CDS from ADS, the admin listener, and the internal-listener bootstrap
 * extension (user-space connections between listeners and clusters of the same Envoy), cluster
 * stats created on first use (unless `eagerStats`), the per-cluster stats nothing reads not made
 * (unless `allStats`, stats_matcher.ts) and clusters created on a worker when it first needs them
 * (unless `eagerClusters`). The node metadata advertises what the
 * bootstrap enables (`aether.capabilities`, capabilities.ts), so a later agent that adopts this
 * Envoy knows what it may push to it.
 * @module
 */
import { bootstrapCapabilities, CAPABILITIES_KEY } from "./capabilities.ts";
import { statsConfig } from "./stats_matcher.ts";

/** Options of {@link envoyBootstrap}. */
export interface EnvoyBootstrapOptions {
  nodeId: string;
  /** Envoy's service cluster (node.cluster). */
  cluster: string;
  /** The xDS server's TCP address and port. Ignored when `xdsUnixPath` is set. */
  xdsAddress?: string;
  xdsPort?: number;
  /** Dial the xDS server over this unix socket instead of TCP. */
  xdsUnixPath?: string;
  adminAddress?: string;
  /** Admin port; 0 lets the kernel choose (read it back with `--admin-address-path`). */
  adminPort?: number;
  /** Use incremental (delta) xDS instead of state-of-the-world. */
  delta?: boolean;
  /**
   * Overload manager limit on active downstream connections across every listener (Envoy's
   * `global_downstream_max_connections` resource monitor); connections over it are closed on
   * accept. Unset or 0 = no limit.
   */
  maxDownstreamConnections?: number;
  /** Seconds between ADS reconnect attempts at most (default 2: a restarted agent is found fast). */
  xdsRetryMaxSeconds?: number;
  /**
   * Create every cluster's traffic stats up front, as Envoy does by default (`--envoy-eager-stats`).
   * Default false: Envoy creates them on a cluster's first use (`deferred_stat_options`), so the
   * clusters of idle backends cost no stats memory.
   */
  eagerStats?: boolean;
  /**
   * Make every stat Envoy has (`--envoy-all-stats`). Default false: the per-cluster stats that
   * nothing of aether reads are not made (`stats_config.stats_matcher`, stats_matcher.ts).
   */
  allStats?: boolean;
  /**
   * Create every cluster on every worker thread when CDS adds it, as Envoy does by default
   * (`--envoy-eager-clusters`). Default false: a worker creates its copy of an EDS or static
   * cluster on the first request through it (`cluster_manager.enable_deferred_cluster_creation`);
   * the main thread (EDS, health checks, stats, `/clusters`) holds every cluster either way.
   */
  eagerClusters?: boolean;
}

/** The overload manager with only the downstream connection limit. */
function overloadManager(max: number): Record<string, unknown> {
  const monitor = "envoy.resource_monitors.global_downstream_max_connections";
  return {
    resource_monitors: [{
      name: monitor,
      typed_config: {
        "@type":
          "type.googleapis.com/envoy.extensions.resource_monitors.downstream_connections.v3.DownstreamConnectionsConfig",
        max_active_downstream_connections: max,
      },
    }],
  };
}

/**
 * The `envoy.bootstrap.internal_listener` bootstrap extension: without it Envoy rejects listeners
 * with `internal_listener` and endpoints with `envoy_internal_address`.
 */
export function internalListenerExtension(): Record<string, unknown> {
  return {
    name: "envoy.bootstrap.internal_listener",
    typed_config: {
      "@type":
        "type.googleapis.com/envoy.extensions.bootstrap.internal_listener.v3.InternalListener",
    },
  };
}

/** Name of the static cluster that reaches the xDS server. */
export const xdsClusterName = "aether_xds";

/** The bootstrap as a plain object (write it as JSON and pass it with `-c`). */
export function envoyBootstrap(o: EnvoyBootstrapOptions): Record<string, unknown> {
  const xdsAddress = o.xdsUnixPath
    ? { pipe: { path: o.xdsUnixPath } }
    : { socket_address: { address: o.xdsAddress ?? "127.0.0.1", port_value: o.xdsPort ?? 18000 } };
  const ads = { ads: {}, resource_api_version: "V3" };
  return {
    node: {
      id: o.nodeId,
      cluster: o.cluster,
      metadata: { [CAPABILITIES_KEY]: bootstrapCapabilities() },
    },
    ...(o.maxDownstreamConnections
      ? { overload_manager: overloadManager(o.maxDownstreamConnections) }
      : {}),
    // Bootstrap.deferred_stat_options (field 39): a cluster's traffic stats (upstream_rq_*,
    // upstream_cx_*, …) are allocated when it is first used, not for every cluster at CDS time.
    ...(o.eagerStats ? {} : { deferred_stat_options: { enable_deferred_creation_stats: true } }),
    ...(o.allStats ? {} : { stats_config: statsConfig() }),
    // Bootstrap.cluster_manager.enable_deferred_cluster_creation: a worker's thread-local copy of
    // an EDS or STATIC cluster (load balancer, host sets) is made on its first request through it.
    ...(o.eagerClusters ? {} : { cluster_manager: { enable_deferred_cluster_creation: true } }),
    dynamic_resources: {
      ads_config: {
        api_type: o.delta ? "DELTA_GRPC" : "GRPC",
        transport_api_version: "V3",
        set_node_on_first_message_only: true,
        grpc_services: [{
          envoy_grpc: {
            cluster_name: xdsClusterName,
            // Reconnect quickly after the agent restarts (it keeps serving meanwhile).
            retry_policy: {
              retry_back_off: {
                base_interval: "0.1s",
                max_interval: `${o.xdsRetryMaxSeconds ?? 2}s`,
              },
            },
          },
        }],
      },
      cds_config: ads,
      lds_config: ads,
    },
    // Internal (user-space) listeners: the node proxy's same-node mTLS hop reaches a local
    // pod's inbound listener without the kernel (agent/xds/translate/node/local.ts).
    bootstrap_extensions: [internalListenerExtension()],
    static_resources: {
      clusters: [{
        name: xdsClusterName,
        type: "STATIC",
        connect_timeout: "1s",
        typed_extension_protocol_options: {
          "envoy.extensions.upstreams.http.v3.HttpProtocolOptions": {
            "@type": "type.googleapis.com/envoy.extensions.upstreams.http.v3.HttpProtocolOptions",
            explicit_http_config: { http2_protocol_options: {} },
          },
        },
        load_assignment: {
          cluster_name: xdsClusterName,
          endpoints: [{ lb_endpoints: [{ endpoint: { address: xdsAddress } }] }],
        },
      }],
    },
    admin: {
      address: {
        socket_address: { address: o.adminAddress ?? "127.0.0.1", port_value: o.adminPort ?? 0 },
      },
    },
  };
}
