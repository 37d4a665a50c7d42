/**
 * The importer's copy of the registry: list every key under the root, watch from the revision
 * after, and keep an origin-partitioned view that changes only when a value changes (etcd makes an
 * event of an identical re-put; the mirror does not pass it on, so no EDS push follows).
 *
 * Liveness is three-way: a registry that does not answer changes nothing (the last view keeps
 * serving; a gauge and one warning say so); an origin whose writer's lease ran out loses its keys
 * (etcd deletes them) and leaves the view; an origin is in the view only once its writer has
 * written `synced`, so a half-written first sync is never served. A watch whose revision was
 * compacted away reads everything again and applies the difference — no event is lost. One
 * attempt (read or watch) runs at a time: a failure ends it and schedules exactly one retry.
 * @module
 */
import type { Logger } from "../log/mod.ts";
import type { Counter, Gauge, Registry } from "../metrics/mod.ts";
import type { KeyValue, KvEvent, RegistryKv, WatchHandle } from "./kv.ts";
import { ALIVE, REGISTRY_PREFIX, splitKey, SYNCED } from "./layout.ts";

/** One origin's keys as the mirror holds them. */
export interface OriginEntries {
  /** `<region>/<cluster>` */
  id: string;
  /** The writer's claim (the `alive` value), "" when the writer's lease is gone. */
  alive: string;
  /** The writer finished its first full sync. */
  synced: boolean;
  /** Every other key of the origin (`exports/ns/svc` …) → its value. */
  entries: ReadonlyMap<string, string>;
}

/** Counters and gauges of a mirror. */
export interface MirrorMetrics {
  /** 1 while the registry answers, 0 while it does not. */
  up: Gauge;
  /** Full reads (start, after a compaction, after an outage whose history was compacted). */
  relists: Counter;
  /** Failed reads or watches. */
  errors: Counter;
  /** Value changes passed on to consumers. */
  changes: Counter;
}

/** The mirror's metrics in `m` (one set per process: the controller's and the agents'). */
export function mirrorMetrics(m: Registry): MirrorMetrics {
  return {
    up: m.gauge("aether_registry_up", "1 while the clusterset registry answers, else 0."),
    relists: m.counter("aether_registry_relists_total", "Full reads of the registry."),
    errors: m.counter("aether_registry_errors_total", "Failed registry reads or watches."),
    changes: m.counter("aether_registry_changes_total", "Registry origins changed."),
  };
}

/** Options of a RegistryMirror. */
export interface RegistryMirrorOptions {
  kv: RegistryKv;
  root?: string;
  logger: Logger;
  metrics: MirrorMetrics;
  /** Called after the view changed, with the origins whose visible entries changed. */
  onChange: (changed: ReadonlySet<string>) => void;
  /** Wait after a failure: doubles from `initialMs` to `maxMs`. */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * How often a watching mirror asks the registry whether it still answers (default 5 s): a hung
   * etcd or a half-open connection ends no watch by itself. A failed probe counts as the watch
   * failing (the view stays; the gauge and a warning say so) and the watch is opened again.
   */
  probeMs?: number;
}

interface OriginState {
  id: string;
  alive: string;
  synced: boolean;
  entries: Map<string, string>;
}

/** A live, origin-partitioned copy of the registry. */
export class RegistryMirror {
  readonly #o: RegistryMirrorOptions;
  readonly #root: string;
  readonly #origins = new Map<string, OriginState>();
  #revision = 0;
  #watch: WatchHandle | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #probe: ReturnType<typeof setInterval> | undefined;
  /** The current read-or-watch attempt (see #begin). */
  #attempt = 0;
  #stopped = false;
  #away = false;
  #failures = 0;
  #firstSync: Promise<void>;
  #resolveFirst!: () => void;

  constructor(opts: RegistryMirrorOptions) {
    this.#o = opts;
    this.#root = opts.root ?? REGISTRY_PREFIX;
    this.#firstSync = new Promise((r) => this.#resolveFirst = r);
  }

  /** Starts reading; resolves once the first full read is in (it retries until it is). */
  start(): Promise<void> {
    this.#relist();
    return this.#firstSync;
  }

  /** Stops watching; the view stays as it is. */
  stop(): void {
    this.#stopped = true;
    this.#begin();
  }

  /** The origins in the view: synced, with a live writer. */
  origins(): OriginEntries[] {
    return [...this.#origins.values()].filter(visible).sort((a, b) => a.id < b.id ? -1 : 1);
  }

  /** One origin when it is in the view. */
  origin(id: string): OriginEntries | undefined {
    const o = this.#origins.get(id);
    return o && visible(o) ? o : undefined;
  }

  /** The store revision the view is at. */
  get revision(): number {
    return this.#revision;
  }

  /**
   * Ends whatever the last attempt left running — its watch, its probe, its retry timer — and
   * returns the next attempt's number. Callbacks of an older attempt are ignored, so one failure
   * schedules one retry and at most one watch is open at any time.
   */
  #begin(): number {
    this.#watch?.cancel();
    this.#watch = undefined;
    clearInterval(this.#probe);
    clearTimeout(this.#timer);
    return ++this.#attempt;
  }

  #relist(): void {
    if (this.#stopped) return;
    const attempt = this.#begin();
    this.#o.kv.range(this.#root).then((r) => {
      if (this.#stopped || attempt !== this.#attempt) return;
      this.#o.metrics.relists.inc();
      this.#replace(r.kvs, r.revision);
      this.#resolveFirst();
      this.#watchFrom(r.revision);
    }, (e) => this.#failed(attempt, e as Error, () => this.#relist()));
  }

  /**
   * Watches from `revision`, the last one the view has — not the one after it. etcd 3.4 drops a
   * delete made at exactly the compaction revision from a watch that starts there, and does not
   * refuse that watch; starting one revision earlier, a compaction that reached past the view is
   * refused (→ relist) instead of silently skipping the delete. The events of `revision` itself
   * come again and change nothing (the view already holds them; only value changes pass on).
   */
  #watchFrom(revision: number): void {
    if (this.#stopped) return;
    const attempt = this.#begin();
    const current = () => !this.#stopped && attempt === this.#attempt;
    const retry = () => this.#watchFrom(this.#revision);
    const watch = this.#o.kv.watch(this.#root, revision, {
      onEvents: (events) => {
        if (!current()) return;
        this.#up();
        this.#apply(events);
      },
      onCompacted: (at) => {
        if (!current()) return;
        this.#o.logger.info("registry history compacted past the watch; reading everything again", {
          watchedFrom: revision,
          compactRevision: at,
        });
        this.#relist();
      },
      onError: (e) => this.#failed(attempt, e, retry),
    });
    if (!current()) {
      watch.cancel(); // it ended while being opened
      return;
    }
    this.#watch = watch;
    const probe = () =>
      this.#o.kv.range(`${this.#root}\u0000probe`).then(
        () => current() && this.#up(),
        (e) => this.#failed(attempt, e as Error, retry),
      );
    // A watch that opens is the registry answering again; later probes catch a registry that
    // stopped answering without closing the watch.
    probe();
    this.#probe = setInterval(probe, this.#o.probeMs ?? 5000);
  }

  /** Attempt `attempt` failed: the view stays, the gauge and one warning say so, one retry. */
  #failed(attempt: number, e: Error, retry: () => void): void {
    if (this.#stopped || attempt !== this.#attempt) return;
    this.#begin();
    this.#o.metrics.errors.inc();
    this.#o.metrics.up.set(0);
    if (!this.#away) {
      this.#away = true;
      this.#o.logger.warn("registry not answering; the last endpoints keep serving", {
        error: e.message,
        revision: this.#revision,
      });
    }
    const b = this.#o.backoff ?? { initialMs: 500, maxMs: 10_000 };
    const wait = Math.min(b.maxMs, b.initialMs * 2 ** this.#failures++);
    this.#timer = setTimeout(retry, wait * (0.75 + Math.random() * 0.5));
  }

  #up(): void {
    this.#failures = 0;
    this.#o.metrics.up.set(1);
    if (this.#away) {
      this.#away = false;
      this.#o.logger.info("registry answering again", { revision: this.#revision });
    }
  }

  #replace(kvs: KeyValue[], revision: number): void {
    this.#up();
    const seen = new Set<string>();
    const events: KvEvent[] = kvs.map((kv) => {
      seen.add(kv.key);
      return { type: "put", kv };
    });
    for (const o of this.#origins.values()) {
      for (const rel of [ALIVE, SYNCED, ...o.entries.keys()]) {
        const key = `${this.#root}${o.id}/${rel}`;
        if (!seen.has(key)) events.push({ type: "delete", key, modRevision: revision });
      }
    }
    this.#apply(events);
    this.#revision = Math.max(this.#revision, revision);
  }

  #apply(events: KvEvent[]): void {
    const changed = new Set<string>();
    for (const e of events) {
      const key = e.type === "put" ? e.kv.key : e.key;
      this.#revision = Math.max(
        this.#revision,
        e.type === "put" ? e.kv.modRevision : e.modRevision,
      );
      const split = splitKey(key, this.#root);
      if (!split) continue;
      const id = `${split.origin.region}/${split.origin.cluster}`;
      const o = this.#origins.get(id) ?? { id, alive: "", synced: false, entries: new Map() };
      this.#origins.set(id, o);
      const wasVisible = visible(o);
      const value = e.type === "put" ? e.kv.value : undefined;
      let differs: boolean;
      if (split.rel === ALIVE) {
        differs = o.alive !== (value ?? "");
        o.alive = value ?? "";
      } else if (split.rel === SYNCED) {
        differs = o.synced !== (value !== undefined);
        o.synced = value !== undefined;
      } else {
        differs = o.entries.get(split.rel) !== value;
        if (value === undefined) o.entries.delete(split.rel);
        else o.entries.set(split.rel, value);
      }
      if (!o.alive && !o.synced && o.entries.size === 0) this.#origins.delete(id);
      if (differs && (wasVisible || visible(o))) changed.add(id);
    }
    if (changed.size === 0) return;
    this.#o.metrics.changes.inc({}, changed.size);
    this.#o.onChange(changed);
  }
}

function visible(o: OriginState): boolean {
  return o.alive !== "" && o.synced;
}
