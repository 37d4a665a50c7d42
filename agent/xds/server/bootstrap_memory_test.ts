/**
 * The bootstrap's memory options: the stats matcher that drops the per-cluster stats nothing of
 * aether reads (`--envoy-all-stats` keeps them) and deferred cluster creation on the workers
 * (`--envoy-eager-clusters` turns it off), from the flags to the bootstrap. Envoy's own behaviour
 * with them is deferred_stats_test.ts's (a real Envoy).
 */
import assert from "node:assert/strict";
import { bootstrapFor } from "../../bootstrap/mod.ts";
import { limitsFromFlags } from "../../limits_flags.ts";
import { envoyBootstrap } from "./mod.ts";

/** The stats an idle EDS cluster has in Envoy 1.40 with stats on first use (from its `/stats`). */
const idleClusterStats = [
  "assignment_stale",
  "assignment_timeout_received",
  "assignment_use_cached",
  ...["default", "high"].flatMap((p) =>
    ["cx_open", "cx_pool_open", "rq_open", "rq_pending_open", "rq_retry_open"].map((s) =>
      `circuit_breakers.${p}.${s}`
    )
  ),
  "default.total_match_count",
  "init_fetch_timeout",
  "lb_healthy_panic",
  "lb_local_cluster_not_ok",
  "lb_recalculate_zone_structures",
  ...["active", "created", "fallback", "fallback_panic", "removed", "selected"].map((s) =>
    `lb_subsets_${s}`
  ),
  ...["cluster_too_small", "no_capacity_left", "routing_all_directly", "routing_cross_zone"]
    .map((s) => `lb_zone_${s}`),
  "lb_zone_routing_sampled",
  "max_host_weight",
  ...["change", "degraded", "excluded", "healthy", "total"].map((s) => `membership_${s}`),
  ...["attempt", "empty", "failure", "no_rebuild", "rejected", "success", "time", "duration"]
    .map((s) => `update_${s}`),
  "version",
  "version_text",
  "warming_state",
];

/** The stats of an idle cluster aether keeps: what its code, docs and tests read. */
const kept = [
  "assignment_use_cached",
  "init_fetch_timeout",
  "lb_healthy_panic",
  "membership_healthy",
  "membership_total",
  "update_rejected",
];

/** Whether the bootstrap's exclusion pattern (RE2; this one is also a JS RegExp) drops `name`. */
function dropped(bootstrap: Record<string, unknown>, name: string): boolean {
  const config = bootstrap.stats_config as {
    stats_matcher: { exclusion_list: { patterns: { safe_regex: { regex: string } }[] } };
  };
  const patterns = config.stats_matcher.exclusion_list.patterns;
  return patterns.some((p) => new RegExp(p.safe_regex.regex).test(name));
}

Deno.test("bootstrap: the stats matcher keeps 6 of an idle cluster's 46 stats", () => {
  const b = envoyBootstrap({ nodeId: "n", cluster: "c" });
  assert.equal(new Set(idleClusterStats).size, 46);
  for (const cluster of ["svc-9.aether.internal", "b.aether.internal|a/newcomer", "aether_xds"]) {
    const left = idleClusterStats.filter((s) => !dropped(b, `cluster.${cluster}.${s}`));
    assert.deepEqual(left.sort(), kept, cluster);
  }
});

Deno.test("bootstrap: the stats matcher keeps traffic, health and every stat outside clusters", () => {
  const b = envoyBootstrap({ nodeId: "n", cluster: "c" });
  const keptNames = [
    // What tests, benches and docs read.
    "cluster.svc.aether.internal.upstream_rq_total",
    "cluster.svc.aether.internal.upstream_rq_5xx",
    "cluster.svc.aether.internal.upstream_rq_time",
    "cluster.svc.aether.internal.upstream_cx_active",
    "cluster.capture-passthrough.upstream_cx_total",
    "cluster.svc.aether.internal.upstream_cx_overflow",
    "cluster.svc.aether.internal.upstream_rq_pending_overflow",
    "cluster.svc.aether.internal.health_check.healthy",
    "cluster.svc.aether.internal.outlier_detection.ejections_active",
    "cluster.svc.aether.internal.ssl.handshake",
    "cluster.svc.aether.internal.ssl.versions.TLSv1.3",
    "cluster.version.upstream_rq_total",
    "listener.aether_inbound_b_b_0.downstream_cx_total",
    "listener.aether_inbound_b.ssl.handshake",
    "http.aether_0_0_0_0_80.downstream_rq_total",
    "http.aether_0_0_0_0_80.downstream_rq_header_timeout",
    "cluster_manager.cds.update_rejected",
    "cluster_manager.cds.version",
    "cluster_manager.cds.update_success",
    "listener_manager.lds.update_success",
    "server.version",
    "overload.envoy.resource_monitors.global_downstream_max_connections.pressure",
    "thread_local_cluster_manager.worker_0.clusters_inflated",
  ];
  for (const name of keptNames) assert.equal(dropped(b, name), false, name);
});

Deno.test("bootstrap: deferred cluster creation and the stats matcher unless turned off", () => {
  const b = envoyBootstrap({ nodeId: "n", cluster: "c" });
  assert.deepEqual(b.cluster_manager, { enable_deferred_cluster_creation: true });
  assert.ok("stats_config" in b);
  const all = envoyBootstrap({ nodeId: "n", cluster: "c", allStats: true });
  assert.equal("stats_config" in all, false);
  const eager = envoyBootstrap({ nodeId: "n", cluster: "c", eagerClusters: true });
  assert.equal("cluster_manager" in eager, false);
  // Each option changes only its own part.
  const { stats_config: _s, ...noStats } = b;
  assert.deepEqual(noStats, all);
  const { cluster_manager: _c, ...noDeferral } = b;
  assert.deepEqual(noDeferral, eager);
});

Deno.test("flags: --envoy-all-stats and --envoy-eager-clusters reach the bootstrap", () => {
  assert.deepEqual(
    [limitsFromFlags({}).envoyAllStats, limitsFromFlags({}).envoyEagerClusters],
    [false, false],
  );
  const on = limitsFromFlags({ "envoy-all-stats": true, "envoy-eager-clusters": true });
  assert.deepEqual([on.envoyAllStats, on.envoyEagerClusters], [true, true]);
  const node = bootstrapFor(["--node-name", "n1"]) as Record<string, unknown>;
  assert.ok("stats_config" in node && "cluster_manager" in node);
  const plain = bootstrapFor([
    "--node-name",
    "n1",
    "--envoy-all-stats",
    "--envoy-eager-clusters",
  ]) as Record<string, unknown>;
  assert.equal("stats_config" in plain || "cluster_manager" in plain, false);
});
