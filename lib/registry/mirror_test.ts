import assert from "node:assert/strict";
import { MemoryKv } from "../../testbed/memory_kv.ts";
import { OriginWriter } from "./origin_writer.ts";
import { quietLogger, until, watchedMirror } from "./_mirror_test_utils.ts";
import { mirrorContract } from "./_mirror_contract_test_utils.ts";

const east = { region: "eu", cluster: "east" };

function writer(kv: MemoryKv, name = "registrar-a"): OriginWriter {
  return new OriginWriter({ kv, origin: east, writer: name, ttlSeconds: 3, logger: quietLogger() });
}

function eps(n: number, value = "v"): Map<string, string> {
  return new Map(Array.from({ length: n }, (_, i) => [`eps/ns/web/pod-${i}`, `${value}${i}`]));
}

Deno.test("mirror: an origin shows only once synced, and an identical publish passes nothing on", async () => {
  const kv = new MemoryKv();
  const w = watchedMirror(kv);
  await w.mirror.start();
  const a = writer(kv);
  await a.publish(eps(200)); // more than one transaction's worth
  await until("origin visible", () => w.mirror.origin("eu/east")?.entries.size === 200);
  // Not visible before synced: every change the mirror passed on already had all 200.
  assert.deepEqual(w.sizes.get("eu/east"), [200]);
  const calls = w.changes.length;
  await a.publish(eps(200));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(w.changes.length, calls, "an identical publish must not reach consumers");
  await a.publish(eps(200, "w"));
  await until(
    "changed values",
    () => w.mirror.origin("eu/east")?.entries.get("eps/ns/web/pod-0") === "w0",
  );
  await a.stop();
  w.mirror.stop();
});

Deno.test("writer: a successor takes over without a delete storm and fences the old writer", async () => {
  const kv = new MemoryKv();
  const w = watchedMirror(kv);
  await w.mirror.start();
  const a = writer(kv, "registrar-a");
  await a.publish(eps(10));
  await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 10);
  const b = writer(kv, "registrar-b");
  const next = eps(10);
  next.delete("eps/ns/web/pod-9");
  await b.publish(next);
  await until("pod-9 gone", () => w.mirror.origin("eu/east")?.entries.size === 9);
  assert.ok(w.sizes.get("eu/east")!.every((n) => n >= 9), `sizes ${w.sizes.get("eu/east")}`);
  // Every key is now on b's lease: a's lease (the store's first) ending deletes nothing.
  await kv.revoke("1");
  assert.equal((await kv.range("/aether/v1/eu/east/")).kvs.length, 11);
  await assert.rejects(a.publish(eps(3)), /held by another writer/);
  assert.equal(a.state, "fenced");
  assert.equal((await kv.range("/aether/v1/eu/east/eps/")).kvs.length, 9);
  await b.stop();
  w.mirror.stop();
});

Deno.test("writer: a dead writer's origin leaves the mirror when its lease runs out", async () => {
  let now = 0;
  const kv = new MemoryKv(() => now);
  const w = watchedMirror(kv);
  await w.mirror.start();
  const a = writer(kv);
  await a.publish(eps(5));
  await until("visible", () => w.mirror.origins().length === 1);
  await a.stop(); // no revoke, no more keepalives: a SIGKILL as etcd sees it
  now += 3000;
  kv.expireLeases();
  await until("origin gone", () => w.mirror.origins().length === 0);
  assert.equal((await kv.range("/aether/v1/")).kvs.length, 0);
});

Deno.test("mirror: a registry away keeps the view, warns once and recovers; a compacted watch relists", async () => {
  const kv = new MemoryKv();
  const w = watchedMirror(kv, 100);
  await w.mirror.start();
  const a = writer(kv);
  await a.publish(eps(3));
  await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 3);
  kv.setAway(true);
  await until("down", () => w.metrics.up.get() === 0);
  await new Promise((r) => setTimeout(r, 300)); // several failed retries
  assert.equal(w.mirror.origin("eu/east")?.entries.size, 3, "the last view keeps serving");
  assert.equal(w.logs.filter((l) => l.level === "warn").length, 1, JSON.stringify(w.logs));
  kv.setAway(false);
  // Changes and a compaction while the mirror is between retries: its watch from the old
  // revision is refused, it reads everything again and applies the difference.
  const next = eps(3);
  next.delete("eps/ns/web/pod-0");
  await a.publish(next);
  next.set("eps/ns/web/pod-7", "v7");
  await a.publish(next);
  await kv.compact((await kv.range("/")).revision);
  const relists = w.metrics.relists.get();
  await until(
    "relisted",
    () => w.mirror.origin("eu/east")?.entries.has("eps/ns/web/pod-7") === true,
  );
  assert.equal(w.mirror.origin("eu/east")?.entries.has("eps/ns/web/pod-0"), false);
  assert.ok(w.metrics.relists.get() > relists);
  assert.equal(w.metrics.up.get(), 1);
  await a.stop();
  w.mirror.stop();
});

Deno.test("mirror: retries during an outage keep at most one watch open", async () => {
  const kv = new MemoryKv();
  const w = watchedMirror(kv, 20, 100);
  await w.mirror.start();
  const a = writer(kv);
  await a.publish(eps(2));
  await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 2);
  kv.setAway(true);
  // Many failed retries (watch and probe both failing each time).
  await until("retries", () => w.metrics.errors.get() >= 12, 60_000);
  kv.setAway(false);
  await until("up", () => w.metrics.up.get() === 1, 30_000);
  await a.publish(eps(3));
  await until("the change after the outage", () => w.mirror.origin("eu/east")?.entries.size === 3);
  // Retries left pending by a leak would each open one more watch within 4 × 20 ms × 1.25 of
  // the restore; give them 40 times that.
  const leaked = await until("a second live watch", () => kv.watchCounts().live > 1, 4000)
    .then(() => true, () => false);
  const counts = kv.watchCounts();
  assert.equal(leaked, false, JSON.stringify(counts));
  assert.equal(counts.live, 1, JSON.stringify(counts));
  assert.equal(counts.peak, 1, JSON.stringify(counts));
  assert.equal(w.logs.filter((l) => l.level === "warn").length, 1, JSON.stringify(w.logs));
  w.mirror.stop();
  assert.equal(kv.watchCounts().live, 0, "stop ends the watch");
  await a.stop();
});

Deno.test("mirror contract: memory backend", async (t) => {
  for (const [name, body] of Object.entries(mirrorContract(new MemoryKv()))) {
    await t.step(name, body);
  }
});
