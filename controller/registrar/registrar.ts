/**
 * The registrar loop: keeps the SPIRE server's aether entries equal to the wanted ones (the
 * cluster alias + one per ServiceAccount, entries.ts). A pass lists the server's entries, plans
 * and applies create → update → delete (so an identity that moves is never missing in between).
 * Passes run one at a time: after a ServiceAccount change (debounced), on a periodic resync
 * (entries changed behind our back come back), and after a failure with capped exponential
 * backoff — a restarting spire-server is logged as a warning and retried; the process keeps
 * running. No pass runs before the ServiceAccount source has its first full list: an empty
 * answer then would read as "delete every entry".
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Registry } from "../../lib/metrics/mod.ts";
import type { EntryStore } from "./client.ts";
import { desiredEntries, type EntryPlan, planEntries, type ServiceAccountRef } from "./entries.ts";

/** Timer functions (tests inject a fake clock). */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  now(): number;
}

const realTimers: Timers = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
  now: () => Date.now(),
};

/** Options of {@link Registrar}. */
export interface RegistrarOptions {
  /** A fresh Entry API connection per pass (closed after it). */
  connect(): EntryStore;
  /** The current ServiceAccounts, or undefined until the source has listed them once. */
  serviceAccounts(): readonly ServiceAccountRef[] | undefined;
  trustDomain: string;
  clusterName: string;
  svidTtlSeconds: number;
  excludeNamespaces?: readonly string[];
  logger: Logger;
  metrics: Registry;
  /** Wait after a change before a pass (default 200 ms). */
  debounceMs?: number;
  /** Pass period without changes (default 60 s). */
  resyncMs?: number;
  /** Retry delay after a failure: doubles from initialMs (default 500) to maxMs (default 30 s). */
  backoff?: { initialMs: number; maxMs: number };
  timers?: Timers;
  /** Runs after each pass (tests). */
  onPass?(result: PassResult): void;
}

/** The outcome of one pass. */
export type PassResult =
  | {
    ok: true;
    desired: number;
    created: number;
    existed: number;
    updated: number;
    deleted: number;
    shadowed: number;
    ms: number;
  }
  | { ok: false; error: string; ms: number };

/** Readiness for /readyz. */
export interface RegistrarReadiness {
  ready: boolean;
  detail: string;
}

/** Runs passes until stopped; {@link notify} on every ServiceAccount change. */
export class Registrar {
  readonly #o: RegistrarOptions;
  readonly #t: Timers;
  readonly #m;
  #timer: unknown;
  #due = Infinity;
  #notBefore = 0;
  #running: Promise<void> | undefined;
  #dirty = false;
  #failures = 0;
  #stopped = false;
  #lastSuccess: number | undefined;
  #lastError: string | undefined;

  constructor(options: RegistrarOptions) {
    this.#o = options;
    this.#t = options.timers ?? realTimers;
    const m = options.metrics;
    this.#m = {
      passes: m.counter(
        "aether_spire_registrar_passes_total",
        "Reconcile passes against the SPIRE server, by result (ok, error).",
      ),
      changes: m.counter(
        "aether_spire_registrar_entry_changes_total",
        "SPIRE entries changed, by op (create, update, delete); create with result existed: " +
          "the server already had it.",
      ),
      desired: m.gauge("aether_spire_registrar_desired_entries", "Entries wanted (alias + SAs)."),
      shadowed: m.gauge(
        "aether_spire_registrar_shadowed_entries",
        "Wanted entries an entry not aether's already provides (left alone).",
      ),
      up: m.gauge(
        "aether_spire_registrar_server_up",
        "1 when the last pass reached the SPIRE server and succeeded, else 0.",
      ),
      lastSuccess: m.gauge(
        "aether_spire_registrar_last_success_timestamp_seconds",
        "When the last pass succeeded (Unix seconds).",
      ),
      seconds: m.histogram(
        "aether_spire_registrar_pass_seconds",
        "Duration of reconcile passes.",
        [0.01, 0.05, 0.1, 0.5, 1, 2, 5, 10, 30],
      ),
    };
  }

  /** Starts: a first pass as soon as the ServiceAccounts are listed ({@link notify} then). */
  start(): void {
    this.notify();
  }

  /** A ServiceAccount changed (or the source finished its first list): pass after the debounce. */
  notify(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#dirty = true;
      return;
    }
    const debounce = this.#o.debounceMs ?? 200;
    this.#schedule(Math.max(debounce, this.#notBefore - this.#t.now()));
  }

  /** Ready once a pass has succeeded (it then stays ready; failures show in the detail). */
  readiness(): RegistrarReadiness {
    if (this.#lastSuccess === undefined) {
      return {
        ready: false,
        detail: this.#lastError
          ? `no pass has succeeded yet: ${this.#lastError}`
          : "waiting for the ServiceAccount list and the first pass",
      };
    }
    const ago = Math.round((this.#t.now() - this.#lastSuccess) / 1000);
    return {
      ready: true,
      detail: this.#lastError
        ? `last pass failed (${this.#lastError}); last success ${ago}s ago`
        : `in sync (last pass ${ago}s ago)`,
    };
  }

  /** Stops scheduling and waits for a running pass. */
  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer !== undefined) this.#t.clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running;
  }

  /** Schedules a pass in `ms` unless one is due sooner. */
  #schedule(ms: number): void {
    const due = this.#t.now() + ms;
    if (this.#timer !== undefined && this.#due <= due) return;
    if (this.#timer !== undefined) this.#t.clearTimeout(this.#timer);
    this.#due = due;
    this.#timer = this.#t.setTimeout(() => {
      this.#timer = undefined;
      this.#due = Infinity;
      this.#running = this.#pass().finally(() => this.#running = undefined);
    }, ms);
  }

  async #pass(): Promise<void> {
    const sas = this.#o.serviceAccounts();
    if (sas === undefined) return; // not listed yet: the source's first list notifies
    this.#dirty = false;
    const started = this.#t.now();
    let result: PassResult;
    try {
      result = await this.#apply(sas, started);
      this.#failures = 0;
      this.#notBefore = 0;
      this.#lastSuccess = this.#t.now();
      this.#lastError = undefined;
      this.#m.passes.inc({ result: "ok" });
      this.#m.up.set(1);
      this.#m.lastSuccess.set(Math.floor(this.#lastSuccess / 1000));
    } catch (e) {
      const error = (e as Error).message;
      result = { ok: false, error, ms: this.#t.now() - started };
      this.#failures++;
      this.#lastError = error;
      this.#m.passes.inc({ result: "error" });
      this.#m.up.set(0);
    }
    this.#m.seconds.observe(result.ms / 1000);
    if (this.#stopped) return;
    if (result.ok) {
      this.#schedule(this.#dirty ? (this.#o.debounceMs ?? 200) : (this.#o.resyncMs ?? 60_000));
    } else {
      const { initialMs, maxMs } = this.#o.backoff ?? { initialMs: 500, maxMs: 30_000 };
      const base = Math.min(initialMs * 2 ** (this.#failures - 1), maxMs);
      const wait = Math.round(base * (0.8 + Math.random() * 0.4));
      this.#notBefore = this.#t.now() + wait;
      this.#o.logger.warn("SPIRE registration pass failed; entries stay as they are, retrying", {
        error: result.error,
        failures: this.#failures,
        retryInMs: wait,
        hint: "check that spire-server runs and serves its private API on --server-socket",
      });
      this.#schedule(wait);
    }
    this.#o.onPass?.(result);
  }

  async #apply(sas: readonly ServiceAccountRef[], started: number): Promise<PassResult> {
    const o = this.#o;
    const desired = desiredEntries({
      trustDomain: o.trustDomain,
      clusterName: o.clusterName,
      svidTtlSeconds: o.svidTtlSeconds,
      serviceAccounts: sas,
      excludeNamespaces: o.excludeNamespaces,
    });
    this.#m.desired.set(desired.length);
    const store = o.connect();
    try {
      const plan = planEntries(desired, await store.listEntries());
      this.#m.shadowed.set(plan.shadowed.length);
      const done = await this.#execute(store, plan);
      const result: PassResult = {
        ok: true,
        desired: desired.length,
        ...done,
        shadowed: plan.shadowed.length,
        ms: this.#t.now() - started,
      };
      const fields = {
        ...result,
        ...(plan.shadowed.length
          ? { shadowedIds: plan.shadowed.slice(0, 5).map((e) => e.spiffeId) }
          : {}),
      };
      if (done.created + done.updated + done.deleted > 0) {
        o.logger.info("SPIRE entries reconciled", fields);
      } else o.logger.debug("SPIRE entries in sync", fields);
      return result;
    } finally {
      store.close();
    }
  }

  async #execute(store: EntryStore, plan: EntryPlan) {
    const c = plan.create.length
      ? await store.createEntries(plan.create)
      : { created: 0, existed: 0 };
    this.#m.changes.inc({ op: "create", result: "created" }, c.created);
    this.#m.changes.inc({ op: "create", result: "existed" }, c.existed);
    const updated = plan.update.length ? await store.updateEntries(plan.update) : 0;
    this.#m.changes.inc({ op: "update" }, updated);
    const d = plan.delete.length
      ? await store.deleteEntries(plan.delete.map((e) => e.id))
      : { deleted: 0, missing: 0 };
    this.#m.changes.inc({ op: "delete" }, d.deleted);
    return { created: c.created, existed: c.existed, updated, deleted: d.deleted };
  }
}
