/**
 * Envoy's stats on first use (`deferred_stat_options`, the bootstrap's default) against a real
 * Envoy 1.40: an idle cluster has no traffic stats, a used one gets them; `eagerStats`
 * (`--envoy-eager-stats`) gives every cluster its stats up front.
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

/** Which of the clusters `used` and `idle` have an `upstream_rq_total` stat after one request. */
async function statsAfterOneRequest(eagerStats: boolean): Promise<string[]> {
  const nodeId = `deferred-stats-${eagerStats ? "eager" : "deferred"}`;
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
  const envoy = await startEnvoy({ nodeId, xdsPort, delta: true, eagerStats });
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
    return ["used", "idle"].filter((c) =>
      new RegExp(`^cluster\\.${c}\\.upstream_rq_total:`, "m").test(text)
    );
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
    assert.deepEqual(await statsAfterOneRequest(false), ["used"]);
  },
});

Deno.test({
  name: "real Envoy: --envoy-eager-stats gives every cluster its traffic stats up front",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assert.deepEqual(await statsAfterOneRequest(true), ["used", "idle"]);
  },
});
