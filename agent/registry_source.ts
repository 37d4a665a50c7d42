/**
 * The clusterset registry as a config source (`--registry-url`): it mirrors every origin and
 * delivers one ClusterSetEndpoints object per imported service — the endpoints resolve gives a
 * ServiceImport backend, this cluster's first — and one HTTPRoute per exporting cluster's
 * producer route (lib/mcs/route_import.ts: attached to the ServiceImport, so callers of the
 * clusterset service obey it). An object that did not change is handed over as the same object
 * (the Source contract). Malformed records are skipped, and counted in
 * `aether_registry_malformed_records{kind}`. The registry away changes nothing: the
 * last endpoints keep serving (the mirror's gauge and warning say so).
 * @module
 */
import type { Logger } from "../lib/log/mod.ts";
import type { Registry } from "../lib/metrics/mod.ts";
import type { Gauge } from "../lib/metrics/mod.ts";
import { CLUSTER_SET_ENDPOINTS_API, ClusterSetIndex, importedRoutes } from "../lib/mcs/mod.ts";
import {
  clusterId,
  mirrorMetrics,
  type Origin,
  type RegistryKv,
  RegistryMirror,
} from "../lib/registry/mod.ts";
import type { Source, SourceObject, SourceRevision } from "../lib/source/mod.ts";

/** Options of a RegistrySource. */
export interface RegistrySourceOptions {
  kv: RegistryKv;
  /** This agent's cluster: its endpoints are tried first. */
  origin: Origin;
  logger: Logger;
  metrics: Registry;
  /** How long `start` waits for the registry's first read before serving without it (5 s). */
  firstReadMs?: number;
}

/** Delivers the registry's endpoints as ClusterSetEndpoints objects. */
export class RegistrySource implements Source {
  readonly #o: RegistrySourceOptions;
  readonly #mirror: RegistryMirror;
  readonly #own: string;
  /**
   * The objects last delivered, with their JSON (and for ClusterSetEndpoints the list they were
   * made from: the index hands an unchanged service's list over as the same array).
   */
  #objects = new Map<string, { json: string; object: SourceObject; list?: unknown }>();
  /** Every origin's endpoint records, parsed where they changed. */
  readonly #index: ClusterSetIndex;
  /** Every origin's producer route records (`routes/…` values), read where origins changed. */
  readonly #routes = new Map<string, string[]>();
  #revision = 0;
  #listener: ((r: SourceRevision) => void) | undefined;
  readonly #malformed: Gauge;
  #skipped = { eps: 0, routes: 0 };

  constructor(opts: RegistrySourceOptions) {
    this.#o = opts;
    this.#own = clusterId(opts.origin);
    this.#index = new ClusterSetIndex(this.#own);
    const m = opts.metrics;
    this.#malformed = m.gauge(
      "aether_registry_malformed_records",
      "Registry records skipped as malformed (or of an unknown version), by kind.",
    );
    this.#mirror = new RegistryMirror({
      kv: opts.kv,
      logger: opts.logger,
      metrics: mirrorMetrics(m),
      onChange: (changed) => this.#deliver(false, changed),
    });
  }

  async start(onRevision: (revision: SourceRevision) => void): Promise<void> {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const wait = this.#o.firstReadMs ?? 5000;
    const first = await Promise.race([
      this.#mirror.start().then(() => true),
      new Promise<false>((r) => timer = setTimeout(() => r(false), wait)),
    ]);
    clearTimeout(timer);
    if (!first) {
      this.#o.logger.warn(
        "registry not read yet; serving ServiceImports without endpoints until it is",
        {
          waitedMs: wait,
        },
      );
    }
    this.#listener = onRevision;
    this.#deliver(true);
  }

  /**
   * Endpoint record values parsed so far: a change parses its changed records and the records of
   * the services they belong to, never every origin's.
   */
  get parsedRecords(): number {
    return this.#index.parsed;
  }

  stop(): Promise<void> {
    this.#listener = undefined;
    this.#mirror.stop();
    return Promise.resolve();
  }

  /** Reads the origins in `origins` again (all of them when undefined). */
  #read(origins?: ReadonlySet<string>): void {
    const ids = origins ??
      new Set([
        ...this.#index.origins(),
        ...this.#routes.keys(),
        ...this.#mirror.origins().map((o) => o.id),
      ]);
    for (const id of ids) {
      const entries = this.#mirror.origin(id)?.entries;
      this.#index.update(id, entries);
      const routes = [...entries ?? []].filter(([rel]) => rel.startsWith("routes/"));
      if (routes.length) this.#routes.set(id, routes.map(([, v]) => v));
      else this.#routes.delete(id);
    }
  }

  #deliver(always = false, origins?: ReadonlySet<string>): void {
    if (!this.#listener) return;
    this.#read(always ? undefined : origins);
    const byService = this.#index.byService();
    const routes = importedRoutes([...this.#routes.values()].flat());
    this.#countSkipped({ eps: this.#index.skipped, routes: routes.skipped });
    const wanted: [string, SourceObject | (() => SourceObject), unknown][] = [];
    for (const [key, endpoints] of [...byService].sort(([a], [b]) => a < b ? -1 : 1)) {
      const [namespace, name] = key.split("/");
      wanted.push([`ClusterSetEndpoints/${key}`, () => ({
        apiVersion: CLUSTER_SET_ENDPOINTS_API,
        kind: "ClusterSetEndpoints",
        metadata: { namespace, name },
        spec: { endpoints },
      }), endpoints]);
    }
    for (const r of routes.routes) {
      wanted.push([`HTTPRoute/${r.metadata.namespace}/${r.metadata.name}`, r, r]);
    }
    let changed = always || wanted.length !== this.#objects.size;
    const next = new Map<string, { json: string; object: SourceObject; list?: unknown }>();
    for (const [key, make, data] of wanted) {
      const prior = this.#objects.get(key);
      // An unchanged service's list is the very array delivered last time: no JSON needed.
      if (prior && prior.list === data) {
        next.set(key, prior);
        continue;
      }
      const json = JSON.stringify(data);
      const list = typeof make === "function" ? data : undefined;
      if (prior?.json === json) {
        next.set(key, { ...prior, list });
        continue;
      }
      changed = true;
      next.set(key, { json, object: typeof make === "function" ? make() : make, list });
    }
    this.#objects = next;
    if (!changed) return;
    const objects = [...next.values()].map((e) => e.object);
    this.#listener({
      revision: ++this.#revision,
      objects,
      problems: [],
      origins: new Map([...next.keys()].map((key) => [key, "registry"])),
      kinds: ["ClusterSetEndpoints", "HTTPRoute"],
      // Imported routes were admitted by their own cluster's API server, not this one's: resolve
      // admits them (and reports, rather than serves, one this cluster's schema refuses).
      admitted: routes.routes.length === 0,
    });
  }

  /** The malformed-record gauge, and one warning each time the numbers change. */
  #countSkipped(now: { eps: number; routes: number }): void {
    this.#malformed.set(now.eps, { kind: "endpoint" });
    this.#malformed.set(now.routes, { kind: "route" });
    if (now.eps === this.#skipped.eps && now.routes === this.#skipped.routes) return;
    this.#skipped = now;
    if (now.eps + now.routes === 0) return;
    this.#o.logger.warn("registry records that are not well-formed were skipped", {
      endpoints: now.eps,
      routes: now.routes,
    });
  }
}
