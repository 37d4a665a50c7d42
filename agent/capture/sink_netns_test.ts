/**
 * The capture sink with the FFI applier on real network namespaces (root; peers `ip`, `nft`):
 * two pods captured from one resolved revision, a table deleted by hand and another tampered
 * with repaired on the next timer tick (read back by the CLI, and by traffic), a pod whose netns
 * went away failing alone while the other syncs, its removal once it left, and `removeAll` (an
 * uninstall) leaving no table and the VIP reached directly.
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { normalizeSpec, sameSpec } from "../../lib/nft/mod.ts";
import { ManualTimer, pod, resolved, service } from "./_capture_test_utils.ts";
import { createNetns, type TestNetns } from "./_netns_test_utils.ts";
import { CaptureSink, NftApplier } from "./mod.ts";

const NODE = "node-real";

Deno.test("capture sink on real netns: apply, repair drift, survive a gone netns", async () => {
  const a = await createNetns(["10.96.0.10/32"]);
  const b = await createNetns();
  const timer = new ManualTimer(), metrics = new Registry();
  const applier = new NftApplier();
  const sink = new CaptureSink({
    nodeName: NODE,
    applier,
    logger: new Logger("capture", () => {}, "error"),
    metrics,
    every: timer.every,
  });
  const web = service("app", "web", ["10.96.0.10"], [80]);
  const pods = [pod("app", "a", NODE, a.path), pod("app", "b", NODE, b.path)];
  const want = normalizeSpec({ vips: [{ address: "10.96.0.10", port: 80 }], capturePort: 15001 });
  const right = async (ns: TestNetns, spec = want) => {
    const t = await ns.listed();
    return t !== undefined && t.problems.length === 0 && sameSpec(t.spec, spec);
  };
  const probe = () =>
    a.probe([
      { proto: "tcp", host: "127.0.0.1", port: 15001, name: "capture" },
      { proto: "tcp", host: "0.0.0.0", port: 80, name: "direct" },
    ], [{ proto: "tcp", host: "10.96.0.10", port: 80 }]);
  try {
    const captured = sink.whenCaptured(b.path);
    sink.apply(resolved([web, ...pods], 1));
    assert.equal((await captured).key, "app/b");
    assert.ok(await right(a));
    assert.ok(await right(b));
    assert.deepEqual(await probe(), { "tcp 10.96.0.10:80": "capture" });

    // Drift by hand: a's table deleted, b's got a foreign rule; the tick repairs both.
    await a.nft(["delete", "table", "inet", "aether"]);
    await b.nft(["add", "rule", "inet", "aether", "output", "tcp", "dport", "9", "accept"]);
    assert.deepEqual(await probe(), { "tcp 10.96.0.10:80": "direct" });
    await timer.tick();
    assert.ok(await right(a));
    assert.ok(await right(b));
    assert.deepEqual(await probe(), { "tcp 10.96.0.10:80": "capture" });
    assert.equal(metrics.counter("aether_capture_drift_repairs_total", "").get(), 2);
    assert.deepEqual(sink.pods().map((p) => [p.key, p.state, p.repairs]), [
      ["app/a", "captured", 1],
      ["app/b", "captured", 1],
    ]);

    // b's netns goes away; a new Service still reaches a, by a set sync.
    await b.remove();
    const db = service("app", "db", ["10.96.0.20"], [5432]);
    sink.apply(resolved([web, db, ...pods], 2));
    const next = normalizeSpec({
      vips: [{ address: "10.96.0.10", port: 80 }, { address: "10.96.0.20", port: 5432 }],
      capturePort: 15001,
    });
    assert.ok(await right(a, next));
    assert.equal(sink.pod("app/a")?.last, "synced");
    assert.equal(sink.pod("app/b")?.state, "failed");
    assert.match(sink.pod("app/b")!.error!, /is gone/);
    // b leaves: removed without error, forgotten.
    sink.apply(resolved([web, db, pods[0]], 3));
    assert.deepEqual(sink.pods().map((p) => p.key), ["app/a"]);
    assert.equal(applier.known, 1);
    assert.equal(applier.contexts, 0);
    assert.equal(metrics.counter("aether_capture_removals_total", "").get(), 1);

    // An uninstall: every table goes, and a's VIP traffic goes where it is addressed again.
    assert.deepEqual(sink.removeAll(), { removed: ["app/a"], failed: [] });
    assert.equal(await a.listed(), undefined);
    assert.deepEqual(await probe(), { "tcp 10.96.0.10:80": "direct" });
    assert.equal(applier.known, 0);
  } finally {
    sink.close();
    await a.remove();
    await b.remove();
  }
});
