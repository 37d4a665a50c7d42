/**
 * The options of `agent standalone`, apart from run.ts so that the flag defaults (defaults.ts) and
 * the runtime (run.ts) both take them from here without importing each other.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Source } from "../../lib/source/mod.ts";
import type { SourceFlags } from "../config_source.ts";
import type { EdgeLimits } from "../xds/translate/mod.ts";
import type { EnvoyConcurrency } from "../envoy/mod.ts";

/** Options of `agent standalone` (flag names in comments). */
export interface StandaloneOptions extends SourceFlags {
  /** --config: folder or file of YAML. Ignored when `source` is given. */
  config?: string;
  /** A source to use instead of the config folder (tests). */
  source?: Source;
  /** --envoy: path to an envoy binary, "auto" (PATH, else the peer cache; never downloads) or "none". */
  envoy: string;
  /** --bind-address: address Gateway listeners bind (default 127.0.0.1). */
  bindAddress: string;
  /**
   * --usable-address: addresses (IPs, IPv4 CIDRs) a Gateway's spec.addresses may name (default:
   * the bind address and loopback); any other is Programmed=False AddressNotUsable.
   */
  usableAddresses?: string[];
  /** --admin-address: admin server host:port (default 127.0.0.1:15000). */
  adminAddress: string;
  /** --xds-address: xDS gRPC server host:port (default 127.0.0.1:18000). */
  xdsAddress: string;
  /** --node-id: the Envoy node id (default "aether-standalone"). */
  nodeId: string;
  /** --mesh-domain (default aether.internal). */
  meshDomain: string;
  /** --dns-address: mesh DNS responder host:port, UDP + TCP (default 127.0.0.1:18054; "none" = off). */
  dnsAddress: string;
  /** --dns-upstream: where non-mesh names are forwarded (default: /etc/resolv.conf). */
  dnsUpstreams?: string[];
  /** --envoy-log-level (default warning). */
  envoyLogLevel?: string;
  /** Edge listener limits (--headers-with-underscores, --request-headers-timeout, …). */
  edgeLimits?: Partial<EdgeLimits>;
  /**
   * --scoped-routes-at: an HTTP listener with at least this many hostnames, all exact, is served
   * as a route table per hostname (scoped RDS). Default `DEFAULT_SCOPED_ROUTES_AT`; 0 = never.
   */
  scopedRoutesAt?: number;
  /** --scoped-routes-on-demand: Envoy fetches a scoped host's table on its first request. */
  scopedRoutesOnDemand?: boolean;
  /** --max-downstream-connections: Envoy's overload-manager connection limit (0 = none). */
  maxDownstreamConnections?: number;
  /** --state-dir: where Envoy is recorded for adoption by a restarted agent (unset: a temp dir). */
  stateDir?: string;
  /** --keep-envoy: leave Envoy running when the agent stops. */
  keepEnvoy?: boolean;
  /** --shutdown-drain: on stop, drain Envoy's listeners this long (ms) first (default 0). */
  shutdownDrainMs?: number;
  /** --envoy-eager-stats: Envoy creates every cluster's stats up front (default: on first use). */
  envoyEagerStats?: boolean;
  /** --envoy-all-stats: Envoy makes every stat (default: the per-cluster stats nothing reads are not). */
  envoyAllStats?: boolean;
  /** --envoy-eager-clusters: every cluster on every worker up front (default: on first use). */
  envoyEagerClusters?: boolean;
  /** --envoy-concurrency: Envoy's worker threads (default auto: this process's CPUs). */
  envoyConcurrency?: EnvoyConcurrency;
  /**
   * --spire-socket: the SPIFFE Workload API socket. With it (and --trust-domain) the edge dials
   * every pod endpoint with a known identity over SPIFFE mTLS presenting its own SVID.
   */
  spireSocket?: string;
  /** --trust-domain (required with --spire-socket). */
  trustDomain?: string;
  /** --spiffe-id-template (default `spiffe://{td}/ns/{ns}/sa/{sa}`). */
  spiffeIdTemplate?: string;
  /** --outside-mesh-namespace: namespaces whose pods are dialled as they are (no identity). */
  outsideMeshNamespaces?: string[];
  logger?: Logger;
}
