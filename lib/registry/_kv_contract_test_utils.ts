/**
 * The contract every RegistryKv keeps, as one list of checks run against the memory backend (unit
 * test) and a real etcd (e2e/registry_etcd_test.ts). Each check uses its own prefix.
 * @module
 */
import assert from "node:assert/strict";
import type { KvEvent, RegistryKv } from "./kv.ts";

/** Waits for the next batch of watch events (or a compaction) on `prefix` from `from`. */
export function nextEvents(
  kv: RegistryKv,
  prefix: string,
  from: number,
  timeoutMs = 5000,
): Promise<KvEvent[] | { compacted: number }> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      h.cancel();
      reject(new Error(`no watch event on ${prefix} from ${from} in ${timeoutMs} ms`));
    }, timeoutMs);
    const h = kv.watch(prefix, from, {
      onEvents: (events) => {
        clearTimeout(timer);
        h.cancel();
        resolve(events);
      },
      onCompacted: (compacted) => {
        clearTimeout(timer);
        resolve({ compacted });
      },
      onError: (e) => {
        clearTimeout(timer);
        reject(e);
      },
    });
  });
}

/** The checks: name → body. `expire` makes lease time pass (memory: clock; etcd: real sleep). */
export function kvContract(
  kv: RegistryKv,
  expire: (seconds: number) => Promise<void>,
): Record<string, () => Promise<void>> {
  return {
    "range reads a prefix and nothing beside it, at one revision": async () => {
      await kv.txn(undefined, [
        { put: "/c1/a", value: "1" },
        { put: "/c1/b", value: "ü" },
        { put: "/c10", value: "x" },
      ]);
      const r = await kv.range("/c1/");
      assert.deepEqual(r.kvs.map((kv) => [kv.key, kv.value]), [["/c1/a", "1"], ["/c1/b", "ü"]]);
      assert.ok(r.revision >= r.kvs[0].modRevision);
    },
    "a guarded transaction applies only while its guard holds": async () => {
      const first = await kv.txn({ key: "/c2/k", absent: true }, [{ put: "/c2/k", value: "a" }]);
      assert.equal(first.succeeded, true);
      const again = await kv.txn({ key: "/c2/k", absent: true }, [{ put: "/c2/k", value: "b" }]);
      assert.equal(again.succeeded, false);
      const cas = await kv.txn({ key: "/c2/k", modRevision: first.revision }, [
        { put: "/c2/k", value: "c" },
        { put: "/c2/other", value: "d" },
      ]);
      assert.equal(cas.succeeded, true);
      const stale = await kv.txn({ key: "/c2/k", modRevision: first.revision }, [{
        delete: "/c2/k",
      }]);
      assert.equal(stale.succeeded, false);
      const r = await kv.range("/c2/");
      assert.deepEqual(r.kvs.map((kv) => kv.value), ["c", "d"]);
    },
    "a watch from a revision sees every change after it, in order, deletes included": async () => {
      const start = (await kv.range("/c3/")).revision + 1;
      await kv.txn(undefined, [{ put: "/c3/a", value: "1" }]);
      await kv.txn(undefined, [{ delete: "/c3/a" }]);
      const seen: KvEvent[] = [];
      await new Promise<void>((resolve, reject) => {
        const h = kv.watch("/c3/", start, {
          onEvents: (events) => {
            seen.push(...events);
            if (seen.length >= 2) {
              h.cancel();
              resolve();
            }
          },
          onCompacted: () => reject(new Error("compacted")),
          onError: reject,
        });
      });
      assert.deepEqual(seen.map((e) => e.type), ["put", "delete"]);
      assert.equal(seen[0].type === "put" && seen[0].kv.value, "1");
    },
    "a watch from a compacted revision says so": async () => {
      const start = (await kv.range("/c4/")).revision + 1;
      await kv.txn(undefined, [{ put: "/c4/a", value: "1" }]);
      const r = await kv.txn(undefined, [{ put: "/c4/a", value: "2" }]);
      await kv.compact(r.revision);
      const got = await nextEvents(kv, "/c4/", start);
      assert.ok(!Array.isArray(got) && got.compacted >= r.revision, JSON.stringify(got));
    },
    "a delete at exactly the compaction revision is gone from a watch there; before, refused":
      async () => {
        await kv.txn(undefined, [{ put: "/c7/a", value: "1" }, { put: "/c7/b", value: "1" }]);
        const del = await kv.txn(undefined, [{ delete: "/c7/a" }]);
        await kv.compact(del.revision);
        await kv.txn(undefined, [{ put: "/c7/b", value: "2" }]);
        // etcd 3.4 accepts a watch from the compaction revision, but the delete made there is
        // not in it: only a watch from before it learns (by being refused) that history is gone.
        const at = await nextEvents(kv, "/c7/", del.revision);
        assert.ok(Array.isArray(at), JSON.stringify(at));
        assert.deepEqual(at.map((e) => e.type === "put" ? e.kv.key : `-${e.key}`), ["/c7/b"]);
        const before = await nextEvents(kv, "/c7/", del.revision - 1);
        assert.deepEqual(before, { compacted: del.revision });
      },
    "an identical re-put is still an event (the mirror, not the store, suppresses it)":
      async () => {
        await kv.txn(undefined, [{ put: "/c5/a", value: "same" }]);
        const from = (await kv.range("/c5/")).revision + 1;
        await kv.txn(undefined, [{ put: "/c5/a", value: "same" }]);
        const got = await nextEvents(kv, "/c5/", from);
        assert.ok(Array.isArray(got) && got.length === 1 && got[0].type === "put");
      },
    "a lease that is not kept alive takes its keys with it; a kept one does not": async () => {
      const short = await kv.grant(2);
      const kept = await kv.grant(2);
      await kv.txn(undefined, [
        { put: "/c6/gone", value: "1", lease: short },
        { put: "/c6/kept", value: "1", lease: kept },
      ]);
      const r = await kv.range("/c6/");
      assert.equal(r.kvs.find((k) => k.key === "/c6/kept")?.lease, kept);
      for (let i = 0; i < 4; i++) {
        await expire(1);
        assert.ok((await kv.keepAlive(kept)) > 0);
      }
      assert.deepEqual((await kv.range("/c6/")).kvs.map((k) => k.key), ["/c6/kept"]);
      assert.equal(await kv.keepAlive(short), 0);
      await kv.revoke(kept);
      assert.deepEqual((await kv.range("/c6/")).kvs, []);
    },
  };
}
