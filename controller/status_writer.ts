/**
 * The status writer: takes planned updates, drops those that change nothing, and PATCHes the
 * rest one at a time within a token bucket (`qps`, `burst`), latest plan per object winning.
 * Only while `isLeader()`; never in the way of anything else (offer returns at once).
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
  /** Sustained writes per second (default 20). */
  qps?: number;
  /** Writes allowed at once (default 50). */
  burst?: number;
  isLeader: () => boolean;
  now?: () => number;
}

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
  readonly #written = new Map<string, Written>();
  readonly #writes;
  readonly #skipped;
  readonly #queue;
  #tokens: number;
  #refilled: number;
  #running?: Promise<void>;
  #stopped = false;
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();
  readonly #now: () => number;

  constructor(readonly options: StatusWriterOptions) {
    this.#now = options.now ?? Date.now;
    this.#tokens = options.burst ?? 50;
    this.#refilled = this.#now();
    const m = options.metrics;
    this.#writes = m.counter(
      "aether_controller_status_writes_total",
      "Status PATCHes, by kind and result (written, conflict, gone, error).",
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

  /** Starts draining if there is work and this process leads. */
  kick(): void {
    if (this.#running || this.#stopped || this.#pending.size === 0) return;
    if (!this.options.isLeader()) return;
    this.#running = this.#drain().finally(() => {
      this.#running = undefined;
      this.kick();
    });
  }

  /** Forgets what was written (a new leader term starts from what the server holds). */
  reset(): void {
    this.#written.clear();
  }

  /** Stops writing; waits for the write in flight. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#pending.clear();
    for (const t of this.#retries) clearTimeout(t);
    await this.#running;
  }

  async #token(): Promise<void> {
    const qps = this.options.qps ?? 20, burst = this.options.burst ?? 50;
    for (;;) {
      const now = this.#now();
      this.#tokens = Math.min(burst, this.#tokens + ((now - this.#refilled) / 1000) * qps);
      this.#refilled = now;
      if (this.#tokens >= 1) {
        this.#tokens -= 1;
        return;
      }
      await new Promise((r) => setTimeout(r, Math.ceil(((1 - this.#tokens) / qps) * 1000)));
    }
  }

  async #drain(): Promise<void> {
    const log = this.options.logger;
    while (this.#pending.size > 0 && !this.#stopped && this.options.isLeader()) {
      await this.#token();
      const [key, u] = this.#pending.entries().next().value!;
      this.#pending.delete(key);
      this.#queue.set(this.#pending.size);
      if (!this.options.isLeader() || this.unchanged(u)) continue;
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
}
