/**
 * What a mirror keeps on any RegistryKv, as checks run on the memory backend (mirror_test.ts) and
 * on a real etcd (e2e/registry_etcd_test.ts), plus a store wrapper that cuts a mirror off while
 * the test keeps writing through the store itself.
 * @module
 */
import assert from "node:assert/strict";
import type { RegistryKv, WatchHandle, WatchHandlers } from "./kv.ts";
import { OriginWriter } from "./origin_writer.ts";
import { quietLogger, until, watchedMirror } from "./_mirror_test_utils.ts";

/** A store whose user can be cut off: every open watch ends with an error, calls fail. */
export interface SeverableKv extends RegistryKv {
  /** Ends every open watch as a dropped connection would; calls fail until {@link restore}. */
  sever(): void;
  restore(): void;
}

/** `kv` behind a switch that cuts its user off (the store itself stays writable). */
export function severable(kv: RegistryKv): SeverableKv {
  const open = new Set<{ h: WatchHandle; handlers: WatchHandlers }>();
  let cut = false;
  const gate = <T>(call: () => Promise<T>): Promise<T> =>
    cut ? Promise.reject(new Error("cut off from the registry (test)")) : call();
  return {
    range: (p) => gate(() => kv.range(p)),
    grant: (t) => gate(() => kv.grant(t)),
    keepAlive: (l) => gate(() => kv.keepAlive(l)),
    revoke: (l) => gate(() => kv.revoke(l)),
    txn: (g, ops) => gate(() => kv.txn(g, ops)),
    compact: (r) => gate(() => kv.compact(r)),
    watch: (prefix, from, handlers) => {
      if (cut) {
        queueMicrotask(() => handlers.onError(new Error("cut off from the registry (test)")));
        return { cancel: () => {} };
      }
      const entry = { h: kv.watch(prefix, from, handlers), handlers };
      open.add(entry);
      return { cancel: () => (open.delete(entry), entry.h.cancel()) };
    },
    sever: () => {
      cut = true;
      for (const e of [...open]) {
        open.delete(e);
        e.h.cancel();
        e.handlers.onError(new Error("connection dropped (test)"));
      }
    },
    restore: () => {
      cut = false;
    },
  };
}

/** The checks: name → body. Each writes its own origin under the default root. */
export function mirrorContract(kv: RegistryKv): Record<string, () => Promise<void>> {
  return {
    "a delete at exactly the compaction revision reaches a mirror cut off just before it":
      async () => {
        const cluster = `boundary-${crypto.randomUUID().slice(0, 8)}`;
        const id = `eu/${cluster}`;
        const cut = severable(kv);
        const w = watchedMirror(cut, 100);
        await w.mirror.start();
        const writer = new OriginWriter({
          kv,
          origin: { region: "eu", cluster },
          writer: "a",
          ttlSeconds: 30,
          logger: quietLogger(),
        });
        try {
          await writer.publish(new Map([["eps/ns/web/pod-0", "0"], ["eps/ns/web/pod-1", "1"]]));
          await until("visible", () => w.mirror.origin(id)?.entries.size === 2, 20_000);
          // The mirror has seen the store's last revision R; cut off, it misses R + 1 = a delete,
          // and the history is compacted at exactly R + 1.
          const seen = (await kv.range("/")).revision;
          await until(
            "the mirror at the store's revision",
            () => w.mirror.revision === seen,
            20_000,
          );
          cut.sever();
          await until("cut off", () => w.metrics.up.get() === 0, 20_000);
          await writer.publish(new Map([["eps/ns/web/pod-1", "1"]]));
          const deletedAt = (await kv.range("/")).revision;
          assert.equal(deletedAt, seen + 1, "the delete is the only write while cut off");
          await kv.compact(deletedAt);
          const relists = w.metrics.relists.get();
          cut.restore();
          await until("back", () => w.metrics.up.get() === 1, 20_000);
          await until(
            "the delete made at the compaction revision",
            () => w.mirror.origin(id)?.entries.has("eps/ns/web/pod-0") === false,
            20_000,
          );
          assert.deepEqual([...w.mirror.origin(id)!.entries.keys()], ["eps/ns/web/pod-1"]);
          assert.equal(w.metrics.relists.get(), relists + 1, "one relist, refused watch first");
        } finally {
          w.mirror.stop();
          await writer.withdraw().catch(() => {});
          await writer.stop().catch(() => {});
        }
      },
  };
}
