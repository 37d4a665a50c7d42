/**
 * The clusterset registry as a config source (`--registry-url`): it mirrors every origin and
 * delivers one ClusterSetEndpoints object per imported service — the endpoints resolve gives a
 * ServiceImport backend, this cluster's first. An object whose endpoints did not change is
 * handed over as the same object (the Source contract). The registry away changes nothing: the
 * last endpoints keep serving (the mirror's gauge and warning say so).
 * @module
 */
import type { Logger } from "../lib/log/mod.ts";
import type { Registry } from "../lib/metrics/mod.ts";
import { CLUSTER_SET_ENDPOINTS_API, clusterSetEndpoints } from "../lib/mcs/mod.ts";
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
  /** The objects last delivered, with the JSON of their endpoints. */
  #objects = new Map<string, { json: string; object: SourceObject }>();
  #revision = 0;
  #listener: ((r: SourceRevision) => void) | undefined;

  constructor(opts: RegistrySourceOptions) {
    this.#o = opts;
    this.#own = clusterId(opts.origin);
    const m = opts.metrics;
    this.#mirror = new RegistryMirror({
      kv: opts.kv,
      logger: opts.logger,
      metrics: mirrorMetrics(m),
      onChange: () => this.#deliver(),
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

  stop(): Promise<void> {
    this.#listener = undefined;
    this.#mirror.stop();
    return Promise.resolve();
  }

  #deliver(always = false): void {
    if (!this.#listener) return;
    const values = this.#mirror.origins().flatMap((o) =>
      [...o.entries].filter(([rel]) => rel.startsWith("eps/")).map(([, v]) => v)
    );
    const { byService, skipped } = clusterSetEndpoints(values, this.#own);
    if (skipped > 0) {
      this.#o.logger.warn("registry endpoint records that are not well-formed were skipped", {
        skipped,
      });
    }
    let changed = always || byService.size !== this.#objects.size;
    const next = new Map<string, { json: string; object: SourceObject }>();
    for (const [key, endpoints] of [...byService].sort(([a], [b]) => a < b ? -1 : 1)) {
      const json = JSON.stringify(endpoints);
      const prior = this.#objects.get(key);
      if (prior?.json === json) {
        next.set(key, prior);
        continue;
      }
      changed = true;
      const [namespace, name] = key.split("/");
      next.set(key, {
        json,
        object: {
          apiVersion: CLUSTER_SET_ENDPOINTS_API,
          kind: "ClusterSetEndpoints",
          metadata: { namespace, name },
          spec: { endpoints },
        },
      });
    }
    this.#objects = next;
    if (!changed) return;
    const objects = [...next.values()].map((e) => e.object);
    this.#listener({
      revision: ++this.#revision,
      objects,
      problems: [],
      origins: new Map(
        objects.map((
          o,
        ) => [`ClusterSetEndpoints/${o.metadata.namespace}/${o.metadata.name}`, "registry"]),
      ),
      kinds: ["ClusterSetEndpoints"],
      admitted: true,
    });
  }
}
