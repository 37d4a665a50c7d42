/**
 * The registry's storage contract: a revisioned key-value store with prefix ranges, watches from a
 * revision, leases and guarded transactions — what etcd v3 gives. Two backends implement it: etcd
 * over its JSON gateway (`etcd_kv.ts`, everything outside unit tests) and memory (`memory_kv.ts`,
 * unit tests); one contract test runs against both.
 * @module
 */

/** One stored key. */
export interface KeyValue {
  key: string;
  value: string;
  /** The store revision of the key's last change. */
  modRevision: number;
  /** The lease the key is bound to ("" when none). */
  lease: string;
}

/** A consistent read of every key under a prefix. */
export interface RangeResult {
  kvs: KeyValue[];
  /**
   * The store revision the read saw. Watch from `revision` itself, not `revision + 1`: etcd 3.4
   * drops a delete made at exactly the compaction revision from a watch started at that revision
   * (and does not refuse it), so only a watch from before it is told that history is gone.
   */
  revision: number;
}

/** A change seen by a watch. */
export type KvEvent =
  | { type: "put"; kv: KeyValue }
  | { type: "delete"; key: string; modRevision: number };

/** What a watch reports. Exactly one of `onCompacted` / `onError` ends it. */
export interface WatchHandlers {
  /** Changes in revision order. */
  onEvents(events: KvEvent[]): void;
  /** The start revision is gone (compacted): the watcher must read the prefix again. */
  onCompacted(compactRevision: number): void;
  /** The store went away or answered garbage; the watch ended. */
  onError(error: Error): void;
}

/** A running watch. */
export interface WatchHandle {
  cancel(): void;
}

/** One write inside a transaction. */
export type KvOp =
  | { put: string; value: string; lease?: string }
  | { delete: string };

/** A transaction's precondition on one key. */
export type KvGuard =
  | { key: string; absent: true }
  | { key: string; modRevision: number };

/** The outcome of a transaction. */
export interface TxnResult {
  /** The guard held and every op was applied. */
  succeeded: boolean;
  /** The store revision after the transaction (the ops' modRevision when they changed a key). */
  revision: number;
}

/**
 * The most ops one transaction may carry (etcd's `--max-txn-ops` default is 128; one op is kept
 * for slack).
 */
export const MAX_TXN_OPS = 127;

/** A revisioned key-value store with leases. Failures reject with an Error saying what to do. */
export interface RegistryKv {
  /** Every key under `prefix` at one revision. */
  range(prefix: string): Promise<RangeResult>;
  /**
   * Changes under `prefix` from `fromRevision` on (inclusive); `onCompacted` when
   * `fromRevision` is below the compaction revision. A delete made at exactly the compaction
   * revision is not in the history any more (etcd 3.4), yet a watch from there is not refused.
   */
  watch(prefix: string, fromRevision: number, handlers: WatchHandlers): WatchHandle;
  /** A new lease; keys put with it are deleted when it expires. Returns its id. */
  grant(ttlSeconds: number): Promise<string>;
  /** Refreshes a lease; returns its TTL in seconds, 0 when the lease is gone. */
  keepAlive(lease: string): Promise<number>;
  /** Ends a lease now (its keys are deleted). */
  revoke(lease: string): Promise<void>;
  /** Applies `ops` atomically if `guard` holds (no guard: always). At most MAX_TXN_OPS ops. */
  txn(guard: KvGuard | undefined, ops: KvOp[]): Promise<TxnResult>;
  /** Drops history before `revision` (tests force the relist path with it). */
  compact(revision: number): Promise<void>;
}

/** The exclusive end of a prefix range: the prefix with its last byte incremented. */
export function prefixEnd(prefix: string): string {
  if (prefix === "") throw new Error("an empty registry prefix would read the whole store");
  const last = prefix.charCodeAt(prefix.length - 1);
  return prefix.slice(0, -1) + String.fromCharCode(last + 1);
}
