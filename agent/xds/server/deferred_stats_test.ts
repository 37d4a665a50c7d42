/**
 * Envoy's stats on first use (`deferred_stat_options`, the bootstrap's default) against a real
 * Envoy 1.40: an idle cluster has no traffic stats, a used one gets them; `eagerStats`
 * (`--envoy-eager-stats`) gives every cluster its stats up front. With them the bootstrap's stats
 * matcher (stats_matcher.ts; `--envoy-all-stats` off) and deferred cluster creation on the workers
 * (`--envoy-eager-clusters` off): an idle cluster keeps 6 stats and no worker creates it, while
 * the used one serves.
 */
import assert from "node:assert/strict";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { Snapshot, SnapshotCache } from "../cache/mod.ts";
import { envoyBootstrap, XdsServer } from "./mod.ts";
import {
  edsCluster,
  endpoints,
  freePort,
  get,
  listener,
  routeConfig,
  startBackend,
  startEnvoy,
  waitFor,
} from "./_test_utils.ts";

const quiet = new Logger("xds", () => {}, "error");

Deno.test("bootstrap: stats on first use unless eagerStats", () => {
  const deferred = envoyBootstrap({ nodeId: "n", cluster: "c" });
  assert.deepEqual(deferred.deferred_stat_options, { enable_deferred_creation_stats: true });
  const eager = envoyBootstrap({ nodeId: "n", cluster: "c", eagerStats: true });
  assert.equal("deferred_stat_options" in eager, false);
  // Nothing else differs.
  const { deferred_stat_options: _, ...rest } = deferred;
  assert.deepEqual(rest, eager);
});

/** What Envoy holds after one request through cluster `used` (none through `idle`). */
interface AfterOneRequest {
  /** Which of `used` and `idle` have an `upstream_rq_total` stat. */
  withTrafficStats: string[];
  /** The names of `idle`'s stats (without `cluster.idle.`). */
  idleStats: string[];
  /** Clusters the (only) worker has created. */
  workerClusters: number;
}

/** One request through cluster `used` of an Envoy with these bootstrap options. */
async function afterOneRequest(
  o: { eagerStats?: boolean; allStats?: boolean; eagerClusters?: boolean },
): Promise<AfterOneRequest> {
  const nodeId = `deferred-stats-${Object.entries(o).filter(([, v]) => v).map(([k]) => k)}`;
  const backend = startBackend("used");
  const port = freePort();
  const cache = new SnapshotCache();
  cache.setDefaultSnapshot(Snapshot.fromResources({
    listeners: [listener("http", port, "routes")],
    routes: [routeConfig("routes", [{ prefix: "/", cluster: "used" }])],
    clusters: [edsCluster("used"), edsCluster("idle")],
    endpoints: [endpoints("used", [backend.port]), endpoints("idle", [backend.port])],
  }));
  const server = new XdsServer({ cache, logger: quiet, metrics: new Registry() });
  const xdsPort = await server.listen({ port: 0 });
  const envoy = await startEnvoy({ nodeId, xdsPort, delta: true, ...o });
  try {
    await waitFor("envoy ACKs the config", () => server.isReady(nodeId), 120_000)
      .catch((e) => assert.fail(`${e.message}\n${envoy.logs()}`));
    await waitFor(
      "a request through cluster used",
      async () => (await get(`http://127.0.0.1:${port}/x`)).body === "backend used /x",
      120_000,
    );
    // The request's stat is counted once the upstream request is done: wait for it.
    const stats = () =>
      get(`${envoy.adminUrl}/stats?filter=${encodeURIComponent("upstream_rq_total$")}`);
    const text = await waitFor("cluster.used.upstream_rq_total ≥ 1", async () => {
      const { body } = await stats();
      return /^cluster\.used\.upstream_rq_total: [1-9]/m.test(body) && body;
    }, 120_000);
    const all = (await get(`${envoy.adminUrl}/stats`)).body.split("\n");
    return {
      withTrafficStats: ["used", "idle"].filter((c) =>
        new RegExp(`^cluster\\.${c}\\.upstream_rq_total:`, "m").test(text)
      ),
      idleStats: all.filter((l) => l.startsWith("cluster.idle."))
        .map((l) => l.slice("cluster.idle.".length).split(":")[0]).sort(),
      workerClusters: Number(
        /^thread_local_cluster_manager\.worker_0\.clusters_inflated: (\d+)/m
          .exec(all.join("\n"))?.[1],
      ),
    };
  } finally {
    await envoy.stop();
    await server.close();
    await backend.close();
  }
}

Deno.test({
  name: "real Envoy: deferred stats (the default) leave an idle cluster without traffic stats",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assert.deepEqual((await afterOneRequest({})).withTrafficStats, ["used"]);
  },
});

Deno.test({
  name: "real Envoy: --envoy-eager-stats gives every cluster its traffic stats up front",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assert.deepEqual((await afterOneRequest({ eagerStats: true })).withTrafficStats, [
      "used",
      "idle",
    ]);
  },
});

Deno.test({
  name: "real Envoy: the defaults keep 6 stats of an idle cluster and create it on no worker",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const r = await afterOneRequest({});
    assert.deepEqual(r.idleStats, [
      "assignment_use_cached",
      "init_fetch_timeout",
      "lb_healthy_panic",
      "membership_healthy",
      "membership_total",
      "update_rejected",
    ]);
    // The worker created `used` when the request came; `idle` and the xDS cluster never.
    assert.equal(r.workerClusters, 1);
  },
});

Deno.test({
  name: "real Envoy: --envoy-all-stats --envoy-eager-clusters give Envoy's own defaults",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const r = await afterOneRequest({ allStats: true, eagerClusters: true });
    assert.equal(r.idleStats.length, 46, r.idleStats.join(" "));
    assert.ok(r.idleStats.includes("circuit_breakers.default.rq_open"));
    // Every cluster on the worker: the xDS cluster, used and idle.
    assert.equal(r.workerClusters, 3);
  },
});
