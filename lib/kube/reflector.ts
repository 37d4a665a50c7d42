/**
 * One list+watch loop with informer semantics: a paginated list gives the state and its
 * resourceVersion, a watch from there (with bookmarks) keeps it; a 410 Gone (the version fell out
 * of the server's window) relists; any other failure waits with capped exponential backoff and
 * resumes from the last resourceVersion (`retryNow()` cuts a wait short: the owner calls it once
 * the API server answers again). The store is never emptied by a failure, only by the server
 * saying an object is gone. An object whose resourceVersion did not change stays the same
 * JS object.
 * @module
 */
import type { Logger } from "../log/mod.ts";
import type { Counter } from "../metrics/mod.ts";
import { type KubeClient, KubeError, type WatchEvent } from "./client.ts";

/** Backoff between failed attempts: doubles from `initialMs` up to `maxMs`, with jitter. */
export interface Backoff {
  initialMs: number;
  maxMs: number;
}

/** Counters a reflector bumps (labelled by kind). */
export interface ReflectorMetrics {
  events: Counter;
  lists: Counter;
  errors: Counter;
}

/** Options of a Reflector. */
export interface ReflectorOptions<T> {
  client: KubeClient;
  /** Collection path, e.g. /apis/gateway.networking.k8s.io/v1/httproutes. */
  path: string;
  /** Label for logs and metrics. */
  kind: string;
  fieldSelector?: string;
  /** Raw JSON → kept value (called only for new or changed objects). */
  transform: (raw: unknown) => T;
  /**
   * Whether two kept values are the same: given, a changed object whose kept value is the same
   * keeps its old value and gives no `onChange` (a Pod whose conditions changed, when the
   * transform keeps none of them).
   */
  sameValue?: (a: T, b: T) => boolean;
  /** Runs after the store changed (not for bookmarks or unchanged relists). */
  onChange: () => void;
  logger: Logger;
  metrics: ReflectorMetrics;
  backoff?: Backoff;
  /** Items per list page. */
  pageSize?: number;
  /** Runs when a list or watch succeeds after a failure (the server answers again). */
  onRecovered?: () => void;
}

interface Entry<T> {
  rv: string;
  value: T;
}

// deno-lint-ignore no-explicit-any
const keyOf = (o: any): string => `${o?.metadata?.namespace ?? ""}/${o?.metadata?.name ?? ""}`;

/** Keeps the objects of one collection in sync with the API server. */
export class Reflector<T> {
  #store = new Map<string, Entry<T>>();
  #rv = "";
  #stopped = false;
  #abort?: () => void;
  #synced = false;
  #failingSince: number | undefined;
  #syncWaiters: (() => void)[] = [];
  #loop?: Promise<void>;
  #wake?: () => void;
  #resetDelay = false;
  #failure: "away" | "refused" | undefined;

  constructor(readonly options: ReflectorOptions<T>) {}

  /** Whether the first list has completed. */
  get synced(): boolean {
    return this.#synced;
  }

  /** When the current streak of list/watch failures began (ms epoch); undefined while healthy. */
  get failingSince(): number | undefined {
    return this.#failingSince;
  }

  /**
   * Why the current streak of failures goes on: `away` (a network error or a 5xx: retried at once
   * by `retryNow()`), `refused` (403, 404…: keeps its backoff); undefined while healthy.
   */
  get failure(): "away" | "refused" | undefined {
    return this.#failure;
  }

  /** The last resourceVersion seen (list, event or bookmark). */
  get resourceVersion(): string {
    return this.#rv;
  }

  /** The kept values, in store order. */
  values(): T[] {
    return [...this.#store.values()].map((e) => e.value);
  }

  /** Starts the loop; resolves when the first list has completed (retrying until it does). */
  start(): Promise<void> {
    this.#loop ??= this.#run();
    return this.#synced ? Promise.resolve() : new Promise((r) => this.#syncWaiters.push(r));
  }

  /** Ends the loop and any open watch. */
  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort?.();
    for (const w of this.#syncWaiters.splice(0)) w();
    await this.#loop;
  }

  /**
   * Ends a backoff wait now and restarts the backoff from its initial delay (the API server is
   * known to answer again). No effect while healthy, nor when the last failure was the server
   * refusing this kind (403, 404…: that keeps its backoff).
   */
  retryNow(): void {
    if (this.#failure !== "away") return;
    this.#resetDelay = true;
    this.#wake?.();
  }

  /** Reopens the watch from `resourceVersion` (tests: an old one the server has compacted). */
  resumeFrom(resourceVersion: string): void {
    this.#rv = resourceVersion;
    this.#abort?.();
  }

  async #run(): Promise<void> {
    const { initialMs, maxMs } = this.options.backoff ?? { initialMs: 250, maxMs: 30_000 };
    let delay = initialMs;
    const { kind, logger, metrics } = this.options;
    while (!this.#stopped) {
      try {
        if (!this.#rv) await this.#list();
        const opened = Date.now();
        const progressed = await this.#watch();
        if (progressed) delay = initialMs;
        else if (Date.now() - opened < 1000 && !this.#stopped) {
          // Closed at once with nothing said: do not spin.
          await this.#sleep(delay);
          delay = Math.min(delay * 2, maxMs);
        }
      } catch (e) {
        if (this.#stopped) break;
        if (e instanceof KubeError && e.status === 410) {
          logger.info("resourceVersion expired; relisting", { kind });
          this.#rv = "";
          continue;
        }
        metrics.errors.inc({ kind });
        this.#failure = e instanceof KubeError && e.status < 500 ? "refused" : "away";
        this.#failingSince ??= Date.now();
        const wait = delay * (0.5 + Math.random() / 2);
        logger.warn("list/watch failed; the last state keeps serving, retrying", {
          kind,
          error: (e as Error).message,
          retryInMs: Math.round(wait),
        });
        // retryNow() during the failed request: the server answers again, retry at once.
        if (!this.#resetDelay) await this.#sleep(wait);
        delay = this.#resetDelay ? initialMs : Math.min(delay * 2, maxMs);
        this.#resetDelay = false;
      }
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.#wake = undefined;
        resolve();
      };
      const t = setTimeout(done, ms);
      this.#abort = done;
      this.#wake = done;
    });
  }

  async #list(): Promise<void> {
    const { client, path, fieldSelector, kind, metrics } = this.options;
    const limit = String(this.options.pageSize ?? 500);
    // deno-lint-ignore no-explicit-any
    const items: any[] = [];
    let token = "", rv = "";
    do {
      const q = new URLSearchParams({ limit });
      if (fieldSelector) q.set("fieldSelector", fieldSelector);
      if (token) q.set("continue", token);
      const page = await client.get(`${path}?${q}`);
      items.push(...(page.items ?? []));
      token = page.metadata?.continue ?? "";
      rv = page.metadata?.resourceVersion ?? "";
    } while (token && !this.#stopped);
    metrics.lists.inc({ kind });
    const next = new Map<string, Entry<T>>();
    let changed = items.length !== this.#store.size;
    for (const item of items) {
      const key = keyOf(item);
      const old = this.#store.get(key);
      const itemRv = String(item.metadata?.resourceVersion ?? "");
      if (old && old.rv === itemRv) next.set(key, old);
      else {
        const value = this.options.transform(item);
        const same = old !== undefined && this.options.sameValue?.(old.value, value) === true;
        next.set(key, { rv: itemRv, value: same ? old.value : value });
        changed ||= !same;
      }
    }
    this.#store = next;
    this.#rv = rv;
    this.#recovered();
    if (!this.#synced) {
      this.#synced = true;
      for (const w of this.#syncWaiters.splice(0)) w();
    }
    if (changed) this.options.onChange();
  }

  #recovered(): void {
    if (this.#failingSince === undefined) return;
    this.#failingSince = undefined;
    this.#failure = undefined;
    this.options.onRecovered?.();
  }

  /** One watch from the current resourceVersion; true when it delivered anything. */
  #watch(): Promise<boolean> {
    const { client, path, fieldSelector, kind, metrics } = this.options;
    const params: Record<string, string> = {
      resourceVersion: this.#rv,
      allowWatchBookmarks: "true",
      // The server ends the watch after this; a fresh one starts at the same version.
      timeoutSeconds: String(240 + Math.floor(Math.random() * 120)),
    };
    if (fieldSelector) params.fieldSelector = fieldSelector;
    return new Promise((resolve, reject) => {
      let progressed = false, gone = false;
      const onEvent = (e: WatchEvent) => {
        if (this.#stopped) return;
        progressed = true;
        metrics.events.inc({ kind, type: e.type });
        if (e.type === "ERROR") {
          if (e.object?.code === 410) gone = true;
          this.#abort?.();
          return;
        }
        const rv = String(e.object?.metadata?.resourceVersion ?? "");
        if (rv) this.#rv = rv;
        if (e.type === "BOOKMARK") return;
        const key = keyOf(e.object);
        if (e.type === "DELETED") {
          if (this.#store.delete(key)) this.options.onChange();
          return;
        }
        const old = this.#store.get(key);
        if (old?.rv === rv) return;
        const value = this.options.transform(e.object);
        if (old && this.options.sameValue?.(old.value, value)) {
          this.#store.set(key, { rv, value: old.value });
          return;
        }
        this.#store.set(key, { rv, value });
        this.options.onChange();
      };
      const handle = client.watch(path, params, onEvent, (err) => {
        if (gone) reject(new KubeError(410, `watch ${path}: resourceVersion too old`));
        else if (err) reject(err);
        else resolve(progressed);
      }, () => this.#recovered());
      this.#abort = () => handle.abort();
      if (this.#stopped) handle.abort();
    });
  }
}
