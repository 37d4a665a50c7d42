/**
 * The status writer: takes planned updates, drops those that change nothing, and PATCHes the
 * rest, `concurrency` at a time (one object never twice at once), within a token bucket (`qps`,
 * `burst`), latest plan per object winning — so a burst of new routes is written in seconds, not
 * one round trip after another. The API server's priority and fairness is obeyed: a 429 pauses
 * every write for the wait it asks (`retryAfterSeconds`, else 1 s) and requeues the update. Only
 * while `isLeader()`; never in the way of anything else (offer returns at once).
 * @module
 */
import { equalData } from "../lib/data/mod.ts";
import type { Logger } from "../lib/log/mod.ts";
import type { Registry } from "../lib/metrics/mod.ts";
import { type KubeClient, patchStatus } from "../lib/kube/mod.ts";
import type { StatusUpdate } from "./status_plan.ts";

/** Options of StatusWriter. */
export interface StatusWriterOptions {
  client: KubeClient;
  logger: Logger;
  metrics: Registry;
  /** Sustained writes per second (default {@link STATUS_WRITE_DEFAULTS}). */
  qps?: number;
  /** Writes allowed in a burst above `qps` (the bucket's size). */
  burst?: number;
  /** PATCHes in flight at most. */
  concurrency?: number;
  isLeader: () => boolean;
  now?: () => number;
}

/** Default rate and concurrency: 1,000 new routes Accepted in seconds. */
export const STATUS_WRITE_DEFAULTS = { qps: 300, burst: 600, concurrency: 16 } as const;

interface Written {
  /** The status we sent, the one the server stored, the version it was based on and produced. */
  sent: unknown;
  stored: unknown;
  basedOn: string;
  produced: string;
}

/** Writes status with change detection and a bounded rate. */
export class StatusWriter {
  readonly #pending = new Map<string, StatusUpdate>();
  readonly #inFlight = new Set<string>();
  /** No write starts before this time (a 429's wait). */
  #pausedUntil = 0;
  readonly #written = new Map<string, Written>();
  readonly #writes;
  readonly #skipped;
  readonly #queue;
  #tokens: number;
  #refilled: number;
  /** The writing loops running. */
  readonly #loops = new Set<Promise<void>>();
  #stopped = false;
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();
  readonly #now: () => number;

  constructor(readonly options: StatusWriterOptions) {
    this.#now = options.now ?? Date.now;
    this.#tokens = options.burst ?? STATUS_WRITE_DEFAULTS.burst;
    this.#refilled = this.#now();
    const m = options.metrics;
    this.#writes = m.counter(
      "aether_controller_status_writes_total",
      "Status PATCHes, by kind and result (written, conflict, gone, throttled, error).",
    );
    this.#skipped = m.counter(
      "aether_controller_status_unchanged_total",
      "Planned statuses not written because nothing changed.",
    );
    this.#queue = m.gauge("aether_controller_status_queue", "Status writes waiting.");
  }

  /** Whether an update would change nothing (equal to live, or our own write not seen yet). */
  unchanged(u: StatusUpdate): boolean {
    if (equalData(u.status, u.live)) return true;
    const w = this.#written.get(u.key);
    if (!w || !equalData(u.status, w.sent)) return false;
    // The server stored our write with its defaults; or the source revision predates our write.
    return equalData(u.live, w.stored) || u.target.resourceVersion === w.basedOn;
  }

  /** Queues the updates that change something (returns at once). */
  offer(updates: readonly StatusUpdate[]): void {
    for (const u of updates) {
      if (this.unchanged(u)) {
        this.#pending.delete(u.key);
        this.#skipped.inc({ kind: u.target.kind });
      } else this.#pending.set(u.key, u);
    }
    this.#queue.set(this.#pending.size);
    this.kick();
  }

  /** Starts writing loops (up to `concurrency`) if there is work and this process leads. */
  kick(): void {
    if (this.#stopped || this.#pending.size === 0 || !this.options.isLeader()) return;
    const n = Math.max(1, this.options.concurrency ?? STATUS_WRITE_DEFAULTS.concurrency);
    while (this.#loops.size < Math.min(n, this.#pending.size)) {
      const loop: Promise<void> = this.#work().finally(() => this.#loops.delete(loop));
      this.#loops.add(loop);
    }
  }

  /** Forgets what was written (a new leader term starts from what the server holds). */
  reset(): void {
    this.#written.clear();
  }

  /** Stops writing; waits for the writes in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#pending.clear();
    for (const t of this.#retries) clearTimeout(t);
    await Promise.all(this.#loops);
  }

  async #token(): Promise<void> {
    const qps = this.options.qps ?? STATUS_WRITE_DEFAULTS.qps;
    const burst = this.options.burst ?? STATUS_WRITE_DEFAULTS.burst;
    for (;;) {
      const now = this.#now();
      if (now < this.#pausedUntil) {
        await new Promise((r) => setTimeout(r, this.#pausedUntil - now));
        continue;
      }
      this.#tokens = Math.min(burst, this.#tokens + ((now - this.#refilled) / 1000) * qps);
      this.#refilled = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.#tokens) / qps) * 1000)));
    }
  }

  /** The oldest pending update whose object has no write in flight. */
  #next(): [string, StatusUpdate] | undefined {
    for (const entry of this.#pending) if (!this.#inFlight.has(entry[0])) return entry;
    return undefined;
  }

  /**
   * One of the writing loops: takes the next update, writes it, until none is left that no other
   * loop is writing (a loop writing an object takes its newer update after).
   */
  async #work(): Promise<void> {
    while (this.#pending.size > 0 && !this.#stopped && this.options.isLeader()) {
      if (!this.#next()) return;
      await this.#token();
      const next = this.#next();
      if (!next) return;
      const [key, u] = next;
      this.#pending.delete(key);
      this.#queue.set(this.#pending.size);
      if (!this.options.isLeader() || this.unchanged(u)) continue;
      this.#inFlight.add(key);
      try {
        await this.#write(key, u);
      } finally {
        this.#inFlight.delete(key);
      }
    }
  }

  async #write(key: string, u: StatusUpdate): Promise<void> {
    const log = this.options.logger;
    let result;
    try {
      result = await patchStatus(this.options.client, u.target, u.status);
    } catch (e) {
      result = { outcome: "error" as const, message: (e as Error).message };
    }
    this.#writes.inc({ kind: u.target.kind, result: result.outcome });
    if (result.outcome === "written") {
      this.#written.set(key, {
        sent: u.status,
        stored: result.status,
        basedOn: u.target.resourceVersion,
        produced: result.resourceVersion,
      });
      log.debug("status written", { object: key });
    } else if (result.outcome === "conflict") {
      // The object changed since the plan; its watch event brings a new plan.
      log.debug("status write conflict; replanned on the next source revision", { object: key });
    } else if (result.outcome === "throttled") {
      // Priority and fairness: everyone waits, and this update goes back unless a newer came.
      this.#pausedUntil = Math.max(this.#pausedUntil, this.#now() + result.retryAfterMs);
      log.info("the API server asks status writes to wait (429)", {
        object: key,
        waitMs: result.retryAfterMs,
      });
      if (!this.#pending.has(key)) this.#pending.set(key, u);
      this.#queue.set(this.#pending.size);
    } else if (result.outcome === "error") {
      log.warn("status write failed; retrying in 2 s", { object: key, error: result.message });
      const t = setTimeout(() => {
        this.#retries.delete(t);
        if (!this.#pending.has(key)) this.offer([u]);
      }, 2000);
      this.#retries.add(t);
    }
  }
}
