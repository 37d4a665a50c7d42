/**
 * KubeSource: the `Source` that reads the API server. One Reflector per kind; Gateway API kinds
 * are watched only while their CRD is installed, Established and serves a version aether reads
 * (a CRD installed later is picked up; one removed drops its kind). The first revision comes
 * once every watched kind has listed; later changes are batched into one revision per
 * `debounceMs`, and after a revision whose delivery (the consumer's resolve) took t ms the next
 * waits at least t ms: a burst of changes at 10,000 objects is resolved in fewer, larger steps. While the API server is away the reflectors keep their objects, so no revision
 * (least of all an empty one) is delivered until it is back and something changed. Recovery does
 * not wait out each kind's backoff: while a kind fails, the source asks the server's `/version`
 * every `probeMs`; once that (or any kind's list/watch) succeeds, every kind that failed because
 * the server was away (not one the server refused: 403, 404) retries at once, backoff reset.
 * @module
 */
import { Logger } from "../log/mod.ts";
import { Registry } from "../metrics/mod.ts";
import type { Source, SourceObject, SourceRevision } from "../source/mod.ts";
import { objectKey } from "../source/mod.ts";
import type { KubeClient } from "./client.ts";
import {
  apiVersionOf,
  collectionPath,
  crdName,
  type CrdSummary,
  type KindSpec,
  kindSpecs,
  samePod,
  servedVersion,
  summarizeCrd,
  trimObject,
} from "./kinds.ts";
import { type Backoff, Reflector, type ReflectorMetrics } from "./reflector.ts";
import type { CatalogueKind } from "../gatewayapi/catalogue/mod.ts";

/** Options of KubeSource. */
export interface KubeSourceOptions {
  client: KubeClient;
  /**
   * Kinds to read, in the order revisions list them: `defaultKinds(ROUTE_KINDS)` (kinds.ts) for
   * the edge and the controller.
   */
  kinds: readonly string[];
  /** Where the kinds live (default aether's kind catalogue); a test may add a kind of its own. */
  catalogue?: readonly CatalogueKind[];
  /**
   * Pods are read only with this spec.nodeName (the node role); required when kinds has Pod,
   * unless {@link allPods}.
   */
  nodeName?: string;
  /**
   * Every node's Pods (with identity: each endpoint's SPIFFE ID comes from its pod's service
   * account, wherever it runs); trimmed to what aether reads of them (kinds.ts trimObject).
   */
  allPods?: boolean;
  /**
   * Kinds read in one namespace only (kind → namespace), e.g. the controller's EndpointSlices,
   * which it needs only for its edges' Services: a cluster's every slice would cost it memory in
   * proportion to the cluster, not to its Gateways.
   */
  namespaceOf?: Readonly<Record<string, string>>;
  logger?: Logger;
  metrics?: Registry;
  /** Changes within this window become one revision (default 20 ms). */
  debounceMs?: number;
  backoff?: Backoff;
  /** While a kind fails, how often `/version` is asked whether the server is back (default 1 s). */
  probeMs?: number;
}

interface Watched {
  spec: KindSpec;
  version: string;
  reflector: Reflector<SourceObject>;
}

/** Reads Gateway API and core objects from the API server as source revisions. */
export class KubeSource implements Source {
  readonly #opts: KubeSourceOptions;
  readonly #log: Logger;
  readonly #specs: KindSpec[];
  readonly #watched = new Map<string, Watched>();
  readonly #metrics: ReflectorMetrics;
  readonly #objectsGauge;
  readonly #revisions;
  #crds?: Reflector<CrdSummary>;
  #listener?: (s: SourceRevision) => void;
  #revision = 0;
  #timer?: ReturnType<typeof setTimeout>;
  /** No revision is delivered before this time (performance.now()): see #emit. */
  #restUntil = 0;
  #started = false;
  #servedKinds: readonly string[] = [];
  #probeTimer?: ReturnType<typeof setTimeout>;
  #probeRun?: Promise<void>;
  readonly #halt = new AbortController();
  #stopped = false;

  constructor(opts: KubeSourceOptions) {
    this.#opts = opts;
    this.#log = opts.logger ?? new Logger("kube");
    this.#specs = kindSpecs(opts.kinds, opts.catalogue);
    if (opts.kinds.includes("Pod") && !opts.nodeName && !opts.allPods) {
      throw new Error("reading Pods needs a node name (--node-name or $NODE_NAME)");
    }
    const m = opts.metrics ?? new Registry();
    this.#metrics = {
      events: m.counter(
        "aether_kube_watch_events_total",
        "Watch events received, by kind and type.",
      ),
      lists: m.counter("aether_kube_lists_total", "Full lists (start, relist after 410), by kind."),
      errors: m.counter(
        "aether_kube_watch_errors_total",
        "Failed lists/watches (each retried with backoff), by kind.",
      ),
    };
    this.#objectsGauge = m.gauge("aether_kube_objects", "Objects held, by kind.");
    this.#revisions = m.counter("aether_kube_revisions_total", "Source revisions delivered.");
  }

  /** Kinds being watched now, with the version read (a CRD-gated kind appears once its CRD does). */
  get watchedKinds(): { kind: string; apiVersion: string }[] {
    return [...this.#watched.values()].map((w) => ({
      kind: w.spec.kind,
      apiVersion: apiVersionOf(w.spec.group, w.version),
    }));
  }

  /**
   * Kinds (CustomResourceDefinition included) that have not listed yet or whose list/watch has
   * been failing for at least `ms` — the API server away or refusing us. Empty: healthy.
   */
  unhealthyKinds(ms: number, now = Date.now()): string[] {
    const out: string[] = [];
    const check = (kind: string, r: Reflector<unknown> | undefined) => {
      if (!r) return;
      const since = r.failingSince;
      if (!r.synced || (since !== undefined && now - since >= ms)) out.push(kind);
    };
    check("CustomResourceDefinition", this.#crds as Reflector<unknown> | undefined);
    for (const [kind, w] of this.#watched) check(kind, w.reflector as Reflector<unknown>);
    return out.sort();
  }

  /** The reflector of a watched kind (tests: its resourceVersion, expire()). */
  reflectorOf(kind: string): Reflector<SourceObject> | undefined {
    return this.#watched.get(kind)?.reflector;
  }

  async start(onRevision: (revision: SourceRevision) => void): Promise<void> {
    this.#listener = onRevision;
    if (this.#specs.some((s) => s.crd)) {
      this.#crds = new Reflector<CrdSummary>({
        ...this.#common("CustomResourceDefinition"),
        path: "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        transform: summarizeCrd,
        onChange: () => this.#syncKinds(),
      });
      await this.#crds.start();
    }
    this.#syncKinds();
    this.#scheduleProbe();
    await Promise.all([...this.#watched.values()].map((w) => w.reflector.start()));
    this.#started = true;
    this.#emit();
  }

  async stop(): Promise<void> {
    this.#listener = undefined;
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#probeTimer);
    this.#halt.abort();
    await Promise.all([
      this.#probeRun,
      this.#crds?.stop(),
      ...[...this.#watched.values()].map((w) => w.reflector.stop()),
    ]);
  }

  #common(kind: string) {
    return {
      client: this.#opts.client,
      kind,
      logger: this.#log,
      metrics: this.#metrics,
      backoff: this.#opts.backoff,
      onRecovered: () => this.#retryFailing(),
    };
  }

  #reflectors(): Reflector<unknown>[] {
    const all = [...this.#watched.values()].map((w) => w.reflector as Reflector<unknown>);
    return this.#crds ? [this.#crds as Reflector<unknown>, ...all] : all;
  }

  /** The server answers again: every failing kind retries now, its backoff reset. */
  #retryFailing(): void {
    const failing = this.#reflectors().filter((r) => r.failingSince !== undefined);
    if (!failing.length) return;
    this.#log.info("API server answers again; retrying the failing kinds now", {
      kinds: failing.map((r) => r.options.kind),
    });
    for (const r of failing) r.retryNow();
  }

  /** Every `probeMs` (jittered) while a kind fails: is the server back? */
  #scheduleProbe(): void {
    if (this.#stopped) return;
    const ms = this.#opts.probeMs ?? 1000;
    this.#probeTimer = setTimeout(() => {
      this.#probeRun = this.#probe().finally(() => this.#scheduleProbe());
    }, ms * (0.5 + Math.random()));
  }

  async #probe(): Promise<void> {
    if (!this.#reflectors().some((r) => r.failingSince !== undefined)) return;
    try {
      const signal = AbortSignal.any([this.#halt.signal, AbortSignal.timeout(5000)]);
      await this.#opts.client.get("/version", signal);
      this.#retryFailing();
    } catch {
      // Still away: the kinds' own backoff goes on.
    }
  }

  /** Starts and stops reflectors so exactly the kinds whose CRDs are ready are watched. */
  #syncKinds(): void {
    const crds = new Map((this.#crds?.values() ?? []).map((c) => [c.name, c]));
    for (const spec of this.#specs) {
      const version = spec.crd ? servedVersion(spec, crds.get(crdName(spec))) : spec.versions[0];
      const current = this.#watched.get(spec.kind);
      if (current && current.version === version) continue;
      if (current) {
        this.#watched.delete(spec.kind);
        current.reflector.stop();
        this.#log.info("kind no longer served; its objects are dropped", { kind: spec.kind });
        this.#schedule();
      }
      if (!version) continue;
      const apiVersion = apiVersionOf(spec.group, version);
      const reflector = new Reflector<SourceObject>({
        ...this.#common(spec.kind),
        path: collectionPath(spec, version, this.#opts.namespaceOf?.[spec.kind]),
        fieldSelector: spec.kind === "Pod" && !this.#opts.allPods
          ? `spec.nodeName=${this.#opts.nodeName}`
          : undefined,
        transform: (raw) => trimObject(raw, spec.kind, apiVersion),
        sameValue: spec.kind === "Pod" ? samePod : undefined,
        onChange: () => this.#schedule(),
      });
      this.#watched.set(spec.kind, { spec, version, reflector });
      this.#log.info("watching", { kind: spec.kind, apiVersion });
      // Kinds added after start deliver their objects once listed.
      if (this.#started) reflector.start().then(() => this.#schedule());
    }
    const served = this.#specs.filter((s) => this.#watched.has(s.kind)).map((s) => s.kind);
    if (served.join() !== this.#servedKinds.join()) this.#servedKinds = served;
  }

  #schedule(): void {
    if (!this.#started || this.#timer !== undefined) return;
    const rest = this.#restUntil - performance.now();
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.#emit();
    }, Math.max(this.#opts.debounceMs ?? 20, rest));
  }

  #emit(): void {
    if (!this.#listener) return;
    const started = performance.now();
    try {
      this.#deliver();
    } finally {
      // As long a rest as the revision's work took (resolving every object): under a burst of
      // changes the consumer runs at most half the time, and the changes of the rest arrive
      // together in the next revision; after a quiet spell nothing waits.
      const now = performance.now();
      this.#restUntil = now + (now - started);
    }
  }

  #deliver(): void {
    const objects: SourceObject[] = [];
    for (const spec of this.#specs) {
      const w = this.#watched.get(spec.kind);
      if (!w?.reflector.synced) continue;
      const values = w.reflector.values();
      this.#objectsGauge.set(values.length, { kind: spec.kind });
      for (const o of values) objects.push(o);
    }
    const server = this.#opts.client.server;
    this.#revisions.inc();
    this.#listener!({
      revision: ++this.#revision,
      objects,
      problems: [],
      origins: new Map(objects.map((o) => [objectKey(o), server])),
      kinds: this.#servedKinds,
      // The API server defaulted and validated every object: resolve does not admit them again.
      admitted: true,
    });
  }
}
