/**
 * The one writer of an origin's partition (the registrar of one cluster): it claims the origin
 * with a lease, keeps the lease alive, and makes the partition equal a desired map of keys with as
 * few writes as it can (only changed values; an identical value is never re-put).
 *
 * - **Fenced**: the claim is the `alive` key; every write is a transaction guarded by that key's
 *   revision, so a writer that lost its claim to a newer one cannot write over it.
 * - **Leased**: every key is bound to the writer's lease. A writer that dies stops the keepalive,
 *   and etcd deletes its keys after the TTL — a lost cluster leaves the clusterset by itself.
 * - **Hand-over without a delete storm**: a new writer re-binds the keys it keeps to its own lease
 *   (same values: importers see no change), deletes only what it does not keep, and the old lease
 *   then expires with nothing on it. A graceful stop does not revoke, so a successor finds the
 *   keys; `withdraw()` removes the cluster on purpose.
 * - **synced**: written after the first full sync under each lease; importers ignore the origin
 *   until then.
 * @module
 */
import type { Logger } from "../log/mod.ts";
import { type KvOp, MAX_TXN_OPS, type RegistryKv } from "./kv.ts";
import {
  ALIVE,
  type Origin,
  originId,
  originPrefix,
  originProblem,
  REGISTRY_PREFIX,
  SYNCED,
} from "./layout.ts";

/** Options of an OriginWriter. */
export interface OriginWriterOptions {
  kv: RegistryKv;
  origin: Origin;
  /** This writer's name in the claim (a pod name); a random suffix is added. */
  writer: string;
  /** Lease TTL: a dead writer's keys leave after this long (default 10 s). */
  ttlSeconds?: number;
  root?: string;
  logger: Logger;
  /** Clock for the claim's `since` (ISO time). */
  now?: () => Date;
}

/** What a writer is doing, for /status and tests. */
export type WriterState = "idle" | "claimed" | "fenced" | "stopped";

/** The claim kept in the `alive` key. */
export interface AliveClaim {
  writer: string;
  since: string;
}

/** Writes one origin's partition. Not re-entrant: `publish` calls are serialized internally. */
export class OriginWriter {
  readonly #o: OriginWriterOptions;
  readonly #prefix: string;
  readonly #id: string;
  readonly #ttl: number;
  #lease = "";
  #claimRevision = 0;
  /** What the store holds under our lease, as far as we know. */
  #written = new Map<string, string>();
  #desired: ReadonlyMap<string, string> | undefined;
  #synced = false;
  #state: WriterState = "idle";
  #timer: ReturnType<typeof setTimeout> | undefined;
  #queue: Promise<void> = Promise.resolve();

  constructor(opts: OriginWriterOptions) {
    const problem = originProblem(opts.origin);
    if (problem) throw new Error(problem);
    this.#o = opts;
    this.#prefix = originPrefix(opts.origin, opts.root ?? REGISTRY_PREFIX);
    this.#id = `${opts.writer}-${crypto.randomUUID().slice(0, 8)}`;
    this.#ttl = opts.ttlSeconds ?? 10;
  }

  /** This writer's id in the claim. */
  get id(): string {
    return this.#id;
  }

  get state(): WriterState {
    return this.#state;
  }

  /**
   * Makes the partition hold exactly `desired` (keys relative to the origin, e.g.
   * `exports/ns/svc`). Rejects when the registry does not answer (call again later: the next
   * call writes what is still missing) or when another writer holds the origin.
   */
  publish(desired: ReadonlyMap<string, string>): Promise<void> {
    this.#desired = desired;
    const run = this.#queue.then(() => this.#sync());
    this.#queue = run.catch(() => {});
    return run;
  }

  async #sync(): Promise<void> {
    if (this.#state === "stopped") throw new Error("registry writer stopped");
    if (this.#state === "fenced") {
      throw new Error(`registry origin ${originId(this.#o.origin)} is held by another writer`);
    }
    const desired = this.#desired ?? new Map();
    if (!this.#lease) await this.#claim();
    const ops: KvOp[] = [];
    for (const [rel, value] of desired) {
      if (rel === ALIVE || rel === SYNCED) throw new Error(`"${rel}" is the writer's own key`);
      if (this.#written.get(rel) !== value) {
        ops.push({ put: this.#prefix + rel, value, lease: this.#lease });
      }
    }
    for (const rel of this.#written.keys()) {
      if (!desired.has(rel)) ops.push({ delete: this.#prefix + rel });
    }
    for (let i = 0; i < ops.length; i += MAX_TXN_OPS) {
      const batch = ops.slice(i, i + MAX_TXN_OPS);
      await this.#guarded(batch);
      for (const op of batch) {
        const rel = ("put" in op ? op.put : op.delete).slice(this.#prefix.length);
        if ("put" in op) this.#written.set(rel, op.value);
        else this.#written.delete(rel);
      }
    }
    if (!this.#synced) {
      await this.#guarded([{ put: this.#prefix + SYNCED, value: this.#id, lease: this.#lease }]);
      this.#synced = true;
    }
  }

  async #guarded(ops: KvOp[]): Promise<void> {
    const r = await this.#o.kv.txn(
      { key: this.#prefix + ALIVE, modRevision: this.#claimRevision },
      ops,
    );
    if (r.succeeded) return;
    const alive = (await this.#o.kv.range(this.#prefix + ALIVE)).kvs.find((kv) =>
      kv.key === this.#prefix + ALIVE
    );
    if (!alive) {
      // Our lease ran out (a long outage): claim again and write everything.
      this.#o.logger.warn("registry lease lost; claiming the origin again and re-writing it", {
        origin: originId(this.#o.origin),
      });
      this.#dropClaim();
      throw new Error("registry lease lost; the next publish writes everything again");
    }
    this.#fence(alive.value);
    throw new Error(`registry origin ${originId(this.#o.origin)} is held by another writer`);
  }

  #fence(claim: string): void {
    this.#state = "fenced";
    this.#stopKeepAlive();
    this.#o.logger.error("another writer claimed this registry origin; this one stops writing", {
      origin: originId(this.#o.origin),
      writer: this.#id,
      claim,
    });
  }

  async #claim(): Promise<void> {
    const lease = await this.#o.kv.grant(this.#ttl);
    const claim: AliveClaim = {
      writer: this.#id,
      since: (this.#o.now?.() ?? new Date()).toISOString(),
    };
    const r = await this.#o.kv.txn(undefined, [
      { put: this.#prefix + ALIVE, value: JSON.stringify(claim), lease },
    ]);
    // What a predecessor left is ours to keep or delete: each key counts as unwritten (a stale
    // marker no value equals), so the first sync re-binds what it keeps to our lease (same value:
    // importers see no change) and deletes the rest.
    const existing = await this.#o.kv.range(this.#prefix);
    this.#lease = lease;
    this.#claimRevision = r.revision;
    this.#written = new Map();
    for (const kv of existing.kvs) {
      const rel = kv.key.slice(this.#prefix.length);
      if (rel !== ALIVE && rel !== SYNCED) this.#written.set(rel, `\u0000stale`);
    }
    this.#synced = false;
    this.#state = "claimed";
    this.#o.logger.info("registry origin claimed", {
      origin: originId(this.#o.origin),
      writer: this.#id,
      lease,
    });
    this.#startKeepAlive();
  }

  #dropClaim(): void {
    this.#stopKeepAlive();
    this.#lease = "";
    this.#claimRevision = 0;
    this.#written = new Map();
    this.#synced = false;
    this.#state = "idle";
  }

  #startKeepAlive(): void {
    this.#stopKeepAlive();
    const tick = async () => {
      const lease = this.#lease;
      try {
        const ttl = await this.#o.kv.keepAlive(lease);
        if (ttl <= 0 && lease === this.#lease) {
          this.#o.logger.warn("registry lease expired; re-claiming the origin", {
            origin: originId(this.#o.origin),
            lease,
          });
          this.#dropClaim();
          if (this.#desired) this.publish(this.#desired).catch(() => {});
          return;
        }
      } catch (e) {
        this.#o.logger.warn("registry keepalive failed; retrying", { error: (e as Error).message });
      }
      if (this.#lease === lease && this.#state === "claimed") {
        this.#timer = setTimeout(tick, (this.#ttl * 1000) / 3);
      }
    };
    this.#timer = setTimeout(tick, (this.#ttl * 1000) / 3);
  }

  #stopKeepAlive(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /**
   * Stops writing and keeping the lease alive, leaving the keys for a successor (they leave the
   * registry after the TTL if none comes).
   */
  async stop(): Promise<void> {
    this.#state = "stopped";
    this.#stopKeepAlive();
    await this.#queue;
  }

  /** Removes this origin from the registry now (revokes the lease: every key goes). */
  async withdraw(): Promise<void> {
    const lease = this.#lease;
    await this.stop();
    if (lease) await this.#o.kv.revoke(lease);
  }
}
