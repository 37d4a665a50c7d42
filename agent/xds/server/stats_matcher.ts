/**
 * The stats aether's Envoys do not make: per-cluster stats that nothing of aether reads (its code,
 * its docs, its tests, the chart) and that an idle cluster would otherwise carry — ≈ 40 of the 46
 * an idle EDS cluster has in Envoy 1.40 with stats on first use. At 1,000 routes over 2,434
 * clusters that is ≈ 97,000 stats (docs/performance.md, "Standalone start and the edge's memory").
 * `--envoy-all-stats` keeps every stat (no `stats_matcher` in the bootstrap).
 *
 * Kept for every cluster: the traffic stats (`upstream_rq_*`, `upstream_cx_*`, … made on first use),
 * `health_check.*`, `outlier_detection.*`, `membership_healthy`, `membership_total`,
 * `lb_healthy_panic`, and the EDS subscription's `update_rejected`, `init_fetch_timeout` and
 * `assignment_use_cached`. Nothing outside `cluster.<name>.` is dropped.
 * @module
 */

/**
 * The dropped stats, as names after `cluster.<name>.`: each an RE2 alternative. Zone-aware and
 * subset load balancing are never configured (no `local_cluster_name`, no `lb_subset_config`), so
 * their stats stay 0; the circuit breakers' open gauges (their overflow counters are traffic stats
 * and stay); the transport socket matches' counts; `max_host_weight`; the EDS subscription's
 * bookkeeping (`update_*` but `update_rejected`, `version`, `version_text`, the TTL's
 * `assignment_stale` and `assignment_timeout_received`); `membership_change`, `_degraded`,
 * `_excluded`; `warming_state`.
 */
export const droppedClusterStats: readonly string[] = [
  "circuit_breakers\\.[^.]+\\.[a-z_]+",
  "lb_zone_[a-z_]+",
  "lb_subsets_[a-z_]+",
  "lb_local_cluster_not_ok",
  "lb_recalculate_zone_structures",
  "[^.]+\\.total_match_count",
  "max_host_weight",
  "update_(attempt|success|failure|empty|no_rebuild|time|duration)",
  "version",
  "version_text",
  "assignment_(stale|timeout_received)",
  "membership_(change|degraded|excluded)",
  "warming_state",
];

/** The bootstrap's `stats_config` that rejects {@link droppedClusterStats}. */
export function statsConfig(): Record<string, unknown> {
  return {
    stats_matcher: {
      exclusion_list: {
        patterns: [{
          safe_regex: { regex: `^cluster\\..+\\.(${droppedClusterStats.join("|")})$` },
        }],
      },
    },
  };
}
