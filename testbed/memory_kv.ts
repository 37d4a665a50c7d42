/**
 * The registry store in memory, for unit tests of what sits on it (the mirror, the origin
 * writer): etcd's semantics — one revision counter, history for watches until compacted, leases
 * on an injected clock, guarded transactions, etcd 3.4's compaction of a delete at the compaction
 * revision — a switch that makes it "away", and a count of open watches.
 * @module
 */
import {
  type KeyValue,
  type KvEvent,
  type KvGuard,
  type KvOp,
  MAX_TXN_OPS,
  type RangeResult,
  type RegistryKv,
  type TxnResult,
  type WatchHandle,
  type WatchHandlers,
} from "../lib/registry/mod.ts";

interface Watcher {
  prefix: string;
  handlers: WatchHandlers;
}

/** Watches opened and not yet ended (cancelled, or told of an error or a compaction). */
export interface WatchCounts {
  live: number;
  /** The most that were live at one time. */
  peak: number;
  /** Every watch ever opened. */
  opened: number;
}

/** An in-memory RegistryKv. `now` is the lease clock (ms). */
export class MemoryKv implements RegistryKv {
  #revision = 1;
  #compacted = 0;
  readonly #keys = new Map<string, KeyValue>();
  readonly #history: { revision: number; event: KvEvent }[] = [];
  readonly #leases = new Map<string, { ttl: number; expiresAt: number }>();
  readonly #watchers = new Set<Watcher>();
  /** Every watch not yet ended, registered or still opening. */
  readonly #live = new Set<Watcher>();
  #peak = 0;
  #opened = 0;
  #nextLease = 1;
  #away = false;
  constructor(readonly now: () => number = () => Date.now()) {}

  /** Makes every call fail and ends every watch (true), or serves again (false). */
  setAway(away: boolean): void {
    this.#away = away;
    if (away) {
      for (const w of [...this.#watchers]) {
        this.#end(w).onError(new Error("memory registry is away"));
      }
    }
  }

  /** How many watches are open now, and at most were. */
  watchCounts(): WatchCounts {
    return { live: this.#live.size, peak: this.#peak, opened: this.#opened };
  }

  #end(w: Watcher): WatchHandlers {
    this.#watchers.delete(w);
    this.#live.delete(w);
    return w.handlers;
  }

  /** Deletes the keys of every lease whose time ran out (call after moving the clock). */
  expireLeases(): void {
    for (const [id, l] of this.#leases) {
      if (l.expiresAt <= this.now()) this.#endLease(id);
    }
  }

  #check(): void {
    if (this.#away) throw new Error("memory registry is away");
    this.expireLeases();
  }

  #endLease(id: string): void {
    this.#leases.delete(id);
    const events: KvEvent[] = [];
    const revision = ++this.#revision;
    for (const kv of [...this.#keys.values()]) {
      if (kv.lease !== id) continue;
      this.#keys.delete(kv.key);
      events.push({ type: "delete", key: kv.key, modRevision: revision });
    }
    if (events.length === 0) this.#revision--;
    else this.#publish(revision, events);
  }

  #publish(revision: number, events: KvEvent[]): void {
    for (const event of events) this.#history.push({ revision, event });
    for (const w of this.#watchers) {
      const mine = events.filter((e) => keyOf(e).startsWith(w.prefix));
      if (mine.length > 0) queueMicrotask(() => this.#watchers.has(w) && w.handlers.onEvents(mine));
    }
  }

  range(prefix: string): Promise<RangeResult> {
    try {
      this.#check();
    } catch (e) {
      return Promise.reject(e);
    }
    const kvs = [...this.#keys.values()].filter((kv) => kv.key.startsWith(prefix))
      .sort((a, b) => a.key < b.key ? -1 : 1);
    return Promise.resolve({ kvs, revision: this.#revision });
  }

  watch(prefix: string, fromRevision: number, handlers: WatchHandlers): WatchHandle {
    const w: Watcher = { prefix, handlers };
    this.#opened++;
    this.#live.add(w);
    this.#peak = Math.max(this.#peak, this.#live.size);
    queueMicrotask(() => {
      if (!this.#live.has(w)) return; // cancelled while opening
      if (this.#away) return this.#end(w).onError(new Error("memory registry is away"));
      if (fromRevision < this.#compacted) return this.#end(w).onCompacted(this.#compacted);
      const past = this.#history.filter((h) => h.revision >= fromRevision)
        .map((h) => h.event).filter((e) => keyOf(e).startsWith(prefix));
      this.#watchers.add(w);
      if (past.length > 0) handlers.onEvents(past);
    });
    return { cancel: () => void this.#end(w) };
  }

  grant(ttlSeconds: number): Promise<string> {
    try {
      this.#check();
    } catch (e) {
      return Promise.reject(e);
    }
    const id = String(this.#nextLease++);
    this.#leases.set(id, { ttl: ttlSeconds, expiresAt: this.now() + ttlSeconds * 1000 });
    return Promise.resolve(id);
  }

  keepAlive(lease: string): Promise<number> {
    try {
      this.#check();
    } catch (e) {
      return Promise.reject(e);
    }
    const l = this.#leases.get(lease);
    if (!l) return Promise.resolve(0);
    l.expiresAt = this.now() + l.ttl * 1000;
    return Promise.resolve(l.ttl);
  }

  revoke(lease: string): Promise<void> {
    try {
      this.#check();
    } catch (e) {
      return Promise.reject(e);
    }
    this.#endLease(lease);
    return Promise.resolve();
  }

  txn(guard: KvGuard | undefined, ops: KvOp[]): Promise<TxnResult> {
    try {
      this.#check();
      if (ops.length > MAX_TXN_OPS) throw new Error(`at most ${MAX_TXN_OPS} ops per transaction`);
      for (const op of ops) {
        if ("put" in op && op.lease && !this.#leases.has(op.lease)) {
          throw new Error(`registry lease ${op.lease} not found`);
        }
      }
    } catch (e) {
      return Promise.reject(e);
    }
    if (guard && !this.#holds(guard)) {
      return Promise.resolve({ succeeded: false, revision: this.#revision });
    }
    const revision = this.#revision + 1;
    const events: KvEvent[] = [];
    for (const op of ops) {
      if ("put" in op) {
        const kv = { key: op.put, value: op.value, modRevision: revision, lease: op.lease ?? "" };
        this.#keys.set(op.put, kv);
        events.push({ type: "put", kv });
      } else if (this.#keys.delete(op.delete)) {
        events.push({ type: "delete", key: op.delete, modRevision: revision });
      }
    }
    if (events.length > 0) {
      this.#revision = revision;
      this.#publish(revision, events);
    }
    return Promise.resolve({ succeeded: true, revision: this.#revision });
  }

  #holds(guard: KvGuard): boolean {
    const kv = this.#keys.get(guard.key);
    return "absent" in guard ? kv === undefined : kv?.modRevision === guard.modRevision;
  }

  /**
   * Drops history before `revision`, and — as etcd 3.4 does — a delete made at exactly
   * `revision` (its tombstone is compacted; puts at `revision` stay, being the keys' values then).
   */
  compact(revision: number): Promise<void> {
    this.#compacted = Math.max(this.#compacted, revision);
    const keep = this.#history.filter((h) =>
      h.revision > revision || (h.revision === revision && h.event.type === "put")
    );
    this.#history.splice(0, this.#history.length, ...keep);
    return Promise.resolve();
  }
}

function keyOf(e: KvEvent): string {
  return e.type === "put" ? e.kv.key : e.key;
}
