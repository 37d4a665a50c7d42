/**
 * The registry on a real etcd (Debian's etcd-server, its JSON gateway): the store contract, a
 * writer's lease running out, a hand-over, a compaction under a watch (a delete at exactly the
 * compaction revision included), and etcd stopped under a mirror and a writer.
 */
import assert from "node:assert/strict";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import { kvContract } from "../lib/registry/_kv_contract_test_utils.ts";
import { mirrorContract, severable } from "../lib/registry/_mirror_contract_test_utils.ts";
import { quietLogger, until, watchedMirror } from "../lib/registry/_mirror_test_utils.ts";
import { startEtcd } from "./peers/etcd.ts";

const east = { region: "eu", cluster: "east" };

function eps(n: number, value = "v"): Map<string, string> {
  return new Map(Array.from({ length: n }, (_, i) => [`eps/ns/web/pod-${i}`, `${value}${i}`]));
}

Deno.test("registry on real etcd", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-registry-" });
  const etcd = await startEtcd(dir);
  const kv = new EtcdKv({ url: etcd.url, timeoutMs: 2000 });
  const writer = (name: string, ttlSeconds: number) =>
    new OriginWriter({ kv, origin: east, writer: name, ttlSeconds, logger: quietLogger() });
  try {
    for (
      const [name, body] of Object.entries(
        kvContract(kv, (s) => new Promise((r) => setTimeout(r, s * 1000))),
      )
    ) {
      await t.step(`contract: ${name}`, body);
    }
    for (const [name, body] of Object.entries(mirrorContract(kv))) {
      await t.step(`mirror contract: ${name}`, body);
    }

    await t.step("range reads in pages at one revision (each call stays small)", async () => {
      const ops = Array.from({ length: 10 }, (_, i) => ({ put: `/paged/k${i}`, value: `v${i}` }));
      await kv.txn(undefined, ops);
      const one = await kv.range("/paged/");
      const paged = await new EtcdKv({ url: etcd.url, pageSize: 3 }).range("/paged/");
      assert.deepEqual(paged.kvs.map((k) => k.key), one.kvs.map((k) => k.key));
      assert.deepEqual(paged.kvs.length, 10);
      assert.deepEqual(paged.revision, one.revision);
    });

    await t.step("a writer that dies leaves the mirror within its lease TTL + 2 s", async () => {
      const w = watchedMirror(kv);
      await w.mirror.start();
      const a = writer("a", 3);
      await a.publish(eps(300));
      await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 300);
      assert.deepEqual(w.sizes.get("eu/east"), [300], "never a half-written origin");
      await a.stop(); // keepalives end as with SIGKILL; nothing is revoked
      const took = await until("origin gone", () => w.mirror.origins().length === 0, 10_000);
      assert.ok(took <= 5000, `left after ${took} ms`);
      w.mirror.stop();
    });

    await t.step("a successor takes over with no delete; the old writer is fenced", async () => {
      const w = watchedMirror(kv);
      await w.mirror.start();
      const a = writer("a", 3);
      await a.publish(eps(150));
      await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 150);
      const b = writer("b", 3);
      await b.publish(eps(150));
      await a.stop();
      await new Promise((r) => setTimeout(r, 5000)); // a's lease runs out
      assert.equal(w.mirror.origin("eu/east")?.entries.size, 150);
      assert.ok(w.sizes.get("eu/east")!.every((n) => n === 150), `${w.sizes.get("eu/east")}`);
      await assert.rejects(a.publish(eps(1)), /stopped|held by another writer/);
      const c = writer("c", 3);
      await c.publish(eps(150));
      await assert.rejects(b.publish(eps(2)), /held by another writer/);
      assert.equal(b.state, "fenced");
      assert.equal(w.mirror.origin("eu/east")?.entries.size, 150);
      await c.withdraw();
      await until("withdrawn", () => w.mirror.origins().length === 0);
      await b.stop();
      w.mirror.stop();
    });

    await t.step(
      "a watch whose revision was compacted reads everything again: no event lost",
      async () => {
        const cut = severable(kv);
        const w = watchedMirror(cut, 300);
        await w.mirror.start();
        const a = writer("a", 5);
        await a.publish(eps(5));
        await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 5);
        cut.sever(); // until restored: the writes and the compaction happen while it is away
        const next = eps(5);
        next.delete("eps/ns/web/pod-0");
        await a.publish(next);
        next.set("eps/ns/web/pod-9", "v9");
        await a.publish(next);
        await kv.compact((await kv.range("/")).revision);
        const relists = w.metrics.relists.get();
        cut.restore();
        await until(
          "relisted",
          () => w.mirror.origin("eu/east")?.entries.has("eps/ns/web/pod-9") === true,
          20_000,
        );
        assert.equal(w.mirror.origin("eu/east")?.entries.has("eps/ns/web/pod-0"), false);
        assert.equal(w.metrics.relists.get(), relists + 1);
        await a.withdraw();
        w.mirror.stop();
      },
    );

    await t.step(
      "etcd hung (SIGSTOP): the probe notices, the view keeps serving; SIGCONT: back",
      async () => {
        const w = watchedMirror(kv, 200, 300);
        await w.mirror.start();
        const a = writer("a", 10);
        await a.publish(eps(4));
        await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 4);
        const pid = etcd.proc()!.child.pid;
        Deno.kill(pid, "SIGSTOP");
        try {
          // The watch stays open on a stopped process; only the probe (300 ms, 2 s deadline) sees it.
          await until("down", () => w.metrics.up.get() === 0, 10_000);
          assert.equal(w.mirror.origin("eu/east")?.entries.size, 4);
          assert.match(
            w.logs.find((l) => l.level === "warn")?.msg ?? "",
            /last endpoints keep serving/,
          );
        } finally {
          Deno.kill(pid, "SIGCONT");
        }
        await until("up", () => w.metrics.up.get() === 1, 15_000);
        await a.publish(eps(5));
        await until(
          "the new endpoint",
          () => w.mirror.origin("eu/east")?.entries.size === 5,
          10_000,
        );
        await a.withdraw();
        w.mirror.stop();
      },
    );

    await t.step(
      "etcd stopped: the view keeps serving with a warning and a gauge; back, it moves on",
      async () => {
        const w = watchedMirror(kv, 200);
        await w.mirror.start();
        const a = writer("a", 3);
        await a.publish(eps(20));
        await until("visible", () => w.mirror.origin("eu/east")?.entries.size === 20);
        await etcd.stop();
        await until("down", () => w.metrics.up.get() === 0);
        await new Promise((r) => setTimeout(r, 5000)); // longer than the lease TTL
        assert.equal(w.mirror.origin("eu/east")?.entries.size, 20);
        await assert.rejects(a.publish(eps(21)), /did not answer/);
        await etcd.start();
        await until("up", () => w.metrics.up.get() === 1, 15_000);
        await a.publish(eps(21));
        await until(
          "the new endpoint",
          () => w.mirror.origin("eu/east")?.entries.size === 21,
          10_000,
        );
        assert.ok(
          w.sizes.get("eu/east")!.every((n) => n >= 20),
          "etcd's restart must not drop the origin",
        );
        const warnings = w.logs.filter((l) => l.level === "warn");
        assert.equal(warnings.length, 1, JSON.stringify(w.logs));
        assert.match(warnings[0].msg, /last endpoints keep serving/);
        await a.withdraw();
        w.mirror.stop();
      },
    );
  } finally {
    await etcd.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
