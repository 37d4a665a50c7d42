/**
 * Route edits against a real Envoy 1.40: 100 sequential edits (edit → Envoy ACKed → served,
 * p50/p99 printed) and a burst of 100 edits that must coalesce into few pushes and end on the
 * last one.
 */
import assert from "node:assert/strict";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { Snapshot, SnapshotCache } from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";
import { XdsServer } from "./mod.ts";
import { freePort, get, listener, routeConfig, startEnvoy, waitFor } from "./_test_utils.ts";

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

Deno.test({
  name: "xds server: 100 route edits reach Envoy in order; a burst coalesces",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const nodeId = "envoy-edits";
    const port = freePort();
    const cache = new SnapshotCache();
    const metrics = new Registry();
    const snap = (body: string) =>
      Snapshot.fromResources({
        listeners: [listener("http", port, "routes")],
        routes: [routeConfig("routes", [{ prefix: "/", direct: body }])],
      });
    cache.setDefaultSnapshot(snap("edit 0"));
    const server = new XdsServer({ cache, metrics, logger: new Logger("xds", () => {}) });
    const ready = new Map<string, () => void>();
    server.onReady(nodeId, (v) => ready.get(v)?.());
    const envoy = await startEnvoy({ nodeId, xdsPort: await server.listen({ port: 0 }) });
    const base = `http://127.0.0.1:${port}`;
    try {
      await waitFor("ready", () => server.isReady(nodeId), 60_000);
      const acked: number[] = [];
      const served: number[] = [];
      for (let i = 1; i <= 100; i++) {
        const s = snap(`edit ${i}`);
        const done = new Promise<void>((resolve) => ready.set(s.version, resolve));
        const t0 = performance.now();
        cache.setDefaultSnapshot(s);
        await done;
        acked.push(performance.now() - t0);
        const { body } = await get(base);
        served.push(performance.now() - t0);
        assert.equal(body, `edit ${i}`);
      }
      acked.sort((a, b) => a - b);
      served.sort((a, b) => a - b);
      console.log(
        `edit → ACK p50 ${percentile(acked, 0.5).toFixed(1)} ms p99 ${
          percentile(acked, 0.99).toFixed(1)
        } ms; edit → served p50 ${percentile(served, 0.5).toFixed(1)} ms p99 ${
          percentile(served, 0.99).toFixed(1)
        } ms (100 edits)`,
      );

      const pushes = () =>
        metrics.counter("aether_xds_pushes_total", "").get({ type_url: TypeUrl.route });
      const before = pushes();
      let last = snap("");
      for (let i = 0; i < 100; i++) cache.setDefaultSnapshot(last = snap(`burst ${i}`));
      await waitFor("burst ACKed", () => server.isReady(nodeId));
      assert.equal(server.ackedVersion(nodeId, TypeUrl.route), last.typeVersion(TypeUrl.route));
      assert.equal((await get(base)).body, "burst 99");
      const burstPushes = pushes() - before;
      console.log(`burst of 100 edits → ${burstPushes} RDS pushes`);
      assert.ok(burstPushes <= 3, `burst coalesced (${burstPushes} pushes)`);
    } finally {
      await envoy.stop();
      await server.close();
    }
  },
});
