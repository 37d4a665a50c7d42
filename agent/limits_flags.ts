/**
 * The agent's edge-limit and Envoy-supervision flags: their parseArgs specs, usage text and
 * conversion into run options (kept out of main.ts so every role shares them).
 * @module
 */
import { type EnvoyConcurrency, parseEnvoyConcurrency } from "./envoy/mod.ts";
import {
  checkEdgeLimits,
  DEFAULT_SCOPED_ROUTES_AT,
  edgeLimitDefaults,
  type EdgeLimits,
  type UnderscoreHeaderAction,
} from "./xds/translate/mod.ts";

/** Default of `--max-downstream-connections` (Envoy Gateway's default). */
export const defaultMaxDownstreamConnections = 50_000;

/** parseArgs option specs of these flags. */
export const limitFlagSpecs = {
  "headers-with-underscores": { type: "string" },
  "request-headers-timeout": { type: "string" },
  "stream-idle-timeout": { type: "string" },
  "http2-max-concurrent-streams": { type: "string" },
  "http2-initial-stream-window": { type: "string" },
  "http2-initial-connection-window": { type: "string" },
  "connection-buffer-limit": { type: "string" },
  "max-downstream-connections": { type: "string" },
  "scoped-routes-at": { type: "string" },
  "scoped-routes-on-demand": { type: "boolean" },
  "state-dir": { type: "string" },
  "keep-envoy": { type: "boolean" },
  "shutdown-drain": { type: "string" },
  "envoy-eager-stats": { type: "boolean" },
  "envoy-all-stats": { type: "boolean" },
  "envoy-eager-clusters": { type: "boolean" },
  "envoy-concurrency": { type: "string" },
} as const;

const d = edgeLimitDefaults;

/** Usage lines of these flags. */
export const limitFlagsUsage = `
edge limits (Envoy's edge best practices, Envoy Gateway's defaults):
  --headers-with-underscores <reject|drop|allow>  header names with "_" (default ${d.headersWithUnderscores}: 400)
  --request-headers-timeout <dur>     whole request header block deadline (default ${
  d.requestHeadersTimeoutMs / 1000
}s; 0 = none)
  --stream-idle-timeout <dur>         reset a stream idle this long (default ${
  d.streamIdleTimeoutMs / 1000
}s; 0 = none)
  --http2-max-concurrent-streams <n>  per connection (default ${d.http2MaxConcurrentStreams})
  --http2-initial-stream-window <b>   bytes (default ${d.http2InitialStreamWindowBytes})
  --http2-initial-connection-window <b>  bytes (default ${d.http2InitialConnectionWindowBytes})
  --connection-buffer-limit <b>       per downstream connection, bytes (default ${d.connectionBufferLimitBytes})
  --max-downstream-connections <n>    across all listeners, more are refused (default ${defaultMaxDownstreamConnections}; 0 = none)
  --scoped-routes-at <n>  a listener with this many hostnames or more, all exact, gets a route
                      table per hostname (scoped RDS): an edit makes Envoy rebuild one host's
                      table, not all of them (default ${DEFAULT_SCOPED_ROUTES_AT}; 0 = never)
  --scoped-routes-on-demand  Envoy fetches a host's table on its first request, not all at start:
                      its memory and start grow with the hosts used; a host's first request waits
                      for its table (and for the agent, when it is away)

envoy supervision (Envoy outlives the agent; a restarted agent adopts it):
  --state-dir <dir>   Envoy's pid, admin address, bootstrap and log (envoy.log) (default
                      $XDG_STATE_HOME/aether/<node id>, else ~/.local/state/aether/<node id>)
  --keep-envoy        leave Envoy running when the agent stops (SIGUSR1 does this once)
  --shutdown-drain <dur>  on stop, drain Envoy's listeners this long first: connections are told
                      to close, new ones still taken (a pod leaving a Service) (default 0: none)
  --envoy-eager-stats  create every cluster's stats when it is configured (Envoy's default);
                      without it they are created on the cluster's first use, so idle clusters
                      cost no stats memory (bootstrap deferred_stat_options)
  --envoy-all-stats   make every stat Envoy has; without it the per-cluster stats nothing of
                      aether reads (circuit_breakers.*, lb_zone_*, lb_subsets_*, update_* but
                      update_rejected, version, …) are not made (docs/performance.md)
  --envoy-eager-clusters  create every cluster on every worker when it is configured (Envoy's
                      default); without it a worker creates one on its first request through it
  --envoy-concurrency <n|auto>  Envoy's worker threads (default auto: the CPUs this process may
                      run on — its affinity, bounded by its cgroups' CPU quota; Envoy's own
                      default is every CPU of the machine, and each worker costs memory)
`;

/** A duration flag: "10s", "250ms", "5m", "1h" or plain milliseconds. */
export function parseDurationMs(flag: string, s: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(s.trim());
  if (!m) throw new RangeError(`--${flag}: "${s}" is not a duration (e.g. 10s, 250ms, 5m, 0)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? "ms"]!;
  return Math.round(Number(m[1]) * unit);
}

function integer(flag: string, s: string): number {
  const n = Number(s);
  if (!/^\d+$/.test(s.trim()) || !Number.isSafeInteger(n)) {
    throw new RangeError(`--${flag}: "${s}" is not a whole number`);
  }
  return n;
}

/** Parsed values of these flags. */
export interface LimitFlags {
  edgeLimits: EdgeLimits;
  maxDownstreamConnections: number;
  /** --scoped-routes-at: hostnames of a listener from which it is served scoped (0: never). */
  scopedRoutesAt: number;
  /** --scoped-routes-on-demand: scopes fetch their tables on first use. */
  scopedRoutesOnDemand: boolean;
  stateDir?: string;
  keepEnvoy: boolean;
  /** --shutdown-drain in ms (0: none). */
  shutdownDrainMs: number;
  /** --envoy-eager-stats: Envoy creates every cluster's stats up front (default: on first use). */
  envoyEagerStats: boolean;
  /** --envoy-all-stats: no stats_matcher; Envoy makes every stat (default: the unread are not). */
  envoyAllStats: boolean;
  /** --envoy-eager-clusters: every cluster on every worker up front (default: on first use). */
  envoyEagerClusters: boolean;
  /** --envoy-concurrency: Envoy's worker threads (default auto). */
  envoyConcurrency: EnvoyConcurrency;
}

/** Converts parsed flag values; throws RangeError naming the flag for a bad value. */
export function limitsFromFlags(
  v: Partial<Record<keyof typeof limitFlagSpecs, unknown>>,
): LimitFlags {
  const str = (k: keyof typeof limitFlagSpecs) =>
    typeof v[k] === "string" ? v[k] as string : undefined;
  const dur = (k: keyof typeof limitFlagSpecs, def: number) => {
    const s = str(k);
    return s === undefined ? def : parseDurationMs(k, s);
  };
  const num = (k: keyof typeof limitFlagSpecs, def: number) => {
    const s = str(k);
    return s === undefined ? def : integer(k, s);
  };
  const edgeLimits: EdgeLimits = {
    headersWithUnderscores:
      (str("headers-with-underscores") ?? d.headersWithUnderscores) as UnderscoreHeaderAction,
    requestHeadersTimeoutMs: dur("request-headers-timeout", d.requestHeadersTimeoutMs),
    streamIdleTimeoutMs: dur("stream-idle-timeout", d.streamIdleTimeoutMs),
    http2MaxConcurrentStreams: num("http2-max-concurrent-streams", d.http2MaxConcurrentStreams),
    http2InitialStreamWindowBytes: num(
      "http2-initial-stream-window",
      d.http2InitialStreamWindowBytes,
    ),
    http2InitialConnectionWindowBytes: num(
      "http2-initial-connection-window",
      d.http2InitialConnectionWindowBytes,
    ),
    connectionBufferLimitBytes: num("connection-buffer-limit", d.connectionBufferLimitBytes),
  };
  const bad = checkEdgeLimits(edgeLimits);
  if (bad.length) throw new RangeError(`bad edge limits: ${bad.join("; ")}`);
  return {
    edgeLimits,
    maxDownstreamConnections: num("max-downstream-connections", defaultMaxDownstreamConnections),
    scopedRoutesAt: num("scoped-routes-at", DEFAULT_SCOPED_ROUTES_AT),
    scopedRoutesOnDemand: v["scoped-routes-on-demand"] === true,
    stateDir: str("state-dir"),
    keepEnvoy: v["keep-envoy"] === true,
    shutdownDrainMs: dur("shutdown-drain", 0),
    envoyEagerStats: v["envoy-eager-stats"] === true,
    envoyAllStats: v["envoy-all-stats"] === true,
    envoyEagerClusters: v["envoy-eager-clusters"] === true,
    envoyConcurrency: parseEnvoyConcurrency(str("envoy-concurrency")),
  };
}
