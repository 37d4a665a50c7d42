/**
 * The agent's pipeline, the same for every role: source revision → resolve → IR → the role's
 * program step → xDS cache. The edge's step (the default) translates the IR; the node role cuts
 * the MeshIR per node (`program`); every role's DNS records come from the same resolve result
 * (`onServed`). A revision that fails at any stage is reported and the last good config keeps
 * serving. Edge endpoint-only changes take the fast path: EDS is rebuilt, routes are not
 * re-translated. The CEL library loads on the first revision that needs it (a CRD rule without a
 * hand-written predicate): that revision is applied once it has loaded.
 * @module
 */
import type { IR } from "../lib/ir/types.ts";
import type { Logger } from "../lib/log/mod.ts";
import type { Registry } from "../lib/metrics/mod.ts";
import {
  loadCelOnDemand,
  mergeStatus,
  type ObjectStatus,
  type Problem,
  resolve,
  type ResolveOptions,
  type ResolveResult,
  ResolveState,
  servedRouteKinds,
} from "../lib/gatewayapi/mod.ts";
import { equalData } from "../lib/data/clone.ts";
import { objectKey, type SourceRevision } from "../lib/source/types.ts";
import {
  type EnvoyResources,
  type NamedResource,
  translate,
  translateEndpoints,
  TranslateMemo,
  type TranslateOptions,
} from "./xds/translate/mod.ts";
import { sortedByName } from "./xds/translate/util.ts";
import { Encodings, Snapshot, type SnapshotCache } from "./xds/cache/mod.ts";
import { ResourceReuse } from "./xds/cache/reuse.ts";

/** A problem with the file (or other origin) it came from. */
export type SourcedProblem = Problem & { source?: string };

/** What `/status` shows about the configuration. */
export interface PipelineStatus {
  /** The last source revision seen. */
  revision: number;
  /** xDS snapshot version being served (last good). */
  version?: string;
  /** Source revision that produced the served version. */
  servedRevision?: number;
  objects: ObjectStatus[];
  problems: SourcedProblem[];
  /** Set when the last revision could not be served (the previous one still is). */
  error?: string;
}

/** Options for Pipeline. */
export interface PipelineOptions {
  cache: SnapshotCache;
  logger: Logger;
  metrics: Registry;
  resolve?: ResolveOptions;
  translate?: TranslateOptions;
  /** Node id to program; undefined = the cache's default snapshot (every Envoy). */
  nodeId?: string;
  /** Clock for condition transition times in `/status` (default: the wall clock). */
  now?: () => Date;
  /** Fills in what resolve cannot know (e.g. endpoint identities from Pods), before translate. */
  decorate?: (ir: IR, objects: SourceRevision["objects"]) => IR;
  /** SDS secrets served beside the IR's own (e.g. the edge's SVID and trust bundle). */
  extraSecrets?: () => NamedResource[];
  /**
   * The role's data-plane step instead of the edge's translate → cache (the node role: per-node
   * snapshots from the MeshIR). It throws to keep the last good config.
   */
  program?: (result: ResolveResult, input: SourceRevision) => void;
  /** Called with every resolve result that was served (e.g. DNS records from its mesh). */
  onServed?: (result: ResolveResult) => void;
}

/**
 * Whether two IRs differ at most in their clusters' endpoints (then only EDS needs rebuilding).
 * A walk that stops at the first difference: no serialization of either IR.
 */
function sameRouting(a: IR, b: IR): boolean {
  return equalData({ ...a, clusters: [] }, { ...b, clusters: [] }) &&
    equalData(a.clusters, b.clusters, (key) => key === "endpoints");
}

/** Runs resolve → translate → cache for every revision a source delivers. */
export class Pipeline {
  #status: PipelineStatus = { revision: 0, objects: [], problems: [] };
  #lastIR?: IR;
  #lastResources?: EnvoyResources;
  /** The newest revision handed to apply (applied again once the CEL library has loaded). */
  #newest?: SourceRevision;
  readonly #reuse = new ResourceReuse();
  /** Per computed status object of the last revision: the merged status shown for it. */
  #merged = new Map<unknown, ObjectStatus>();
  /** The memos of this pipeline's resolves (its own: other pipelines never evict them). */
  readonly resolveState: ResolveState = new ResolveState();
  /** What this pipeline's translations and encodings remember. */
  readonly #translateMemo = new TranslateMemo();
  readonly #encodings = new Encodings();
  readonly #applied;
  readonly #failures;
  readonly #duration;
  readonly #problems;

  constructor(readonly options: PipelineOptions) {
    const m = options.metrics;
    this.#applied = m.counter(
      "aether_config_revisions_total",
      "Source revisions processed, by result.",
    );
    this.#failures = m.counter(
      "aether_config_failures_total",
      "Source revisions not served, by stage.",
    );
    this.#duration = m.histogram(
      "aether_config_apply_seconds",
      "Time from source revision to xDS cache.",
    );
    this.#problems = m.gauge("aether_config_problems", "Problems in the current configuration.");
  }

  /** The current status document. */
  get status(): PipelineStatus {
    return this.#status;
  }

  /**
   * Serves the current `extraSecrets` with the last translated resources: only secrets change, so
   * only SDS is pushed (an SVID rotation).
   */
  refreshSecrets(): void {
    if (!this.#lastResources) return;
    this.#publish(this.#lastResources);
  }

  #publish(resources: EnvoyResources): void {
    const extra = this.options.extraSecrets?.() ?? [];
    const all = extra.length
      ? { ...resources, secrets: sortedByName([...resources.secrets, ...extra]) }
      : resources;
    const snap = Snapshot.fromResources(all, undefined, this.#encodings);
    if (this.options.nodeId === undefined) this.options.cache.setDefaultSnapshot(snap);
    else this.options.cache.setSnapshot(this.options.nodeId, snap);
  }

  /** The IR last served. */
  get ir(): IR | undefined {
    return this.#lastIR;
  }

  /**
   * Lays the computed statuses over the ones last shown, so a condition keeps its
   * lastTransitionTime across revisions until its status changes.
   */
  #mergeStatuses(statuses: ObjectStatus[]): ObjectStatus[] {
    const key = (s: ObjectStatus) => `${s.kind}/${s.namespace ?? ""}/${s.name}`;
    let before: Map<string, ObjectStatus> | undefined;
    const now = (this.options.now?.() ?? new Date()).toISOString().replace(/\.\d+Z$/, "Z");
    const merged = new Map<unknown, ObjectStatus>();
    const out = statuses.map((s) => {
      // The same computed status object as last revision for the same object: what that merge
      // gave is shown now (#merged holds only what #status.objects shows), and merging again
      // would give it again (every condition keeps its time), so skip the walk.
      const last = this.#merged.get(s.status);
      if (
        last !== undefined && last.kind === s.kind && last.namespace === s.namespace &&
        last.name === s.name && last.apiVersion === s.apiVersion
      ) {
        merged.set(s.status, last);
        return last;
      }
      before ??= new Map(this.#status.objects.map((o) => [key(o), o]));
      const status = mergeStatus(before.get(key(s))?.status, s.status, now);
      const result = status === s.status ? s : { ...s, status };
      merged.set(s.status, result);
      return result;
    });
    this.#merged = merged;
    return out;
  }

  /** Processes one source revision. Never throws: failures keep the last good config. */
  apply(input: SourceRevision): void {
    const started = performance.now();
    const log = this.options.logger;
    this.#newest = input;
    const sourceProblems: SourcedProblem[] = input.problems.map((p) => ({ ...p }));
    const originOf = (p: Problem) =>
      input.origins.get(
        objectKey({ kind: p.kind, metadata: { namespace: p.namespace, name: p.name } }),
      );
    let stage = "resolve";
    try {
      // Route kinds the source cannot deliver (their CRD is not installed) are not served.
      const options = this.options.resolve ?? {};
      const resolved = resolve(
        input.objects as Parameters<typeof resolve>[0],
        {
          ...options,
          routeKinds: servedRouteKinds(input.kinds, options.routeKinds),
          admitted: input.admitted ?? options.admitted,
        },
        this.resolveState,
      );
      const result = this.options.decorate
        ? { ...resolved, ir: this.options.decorate(resolved.ir, input.objects) }
        : resolved;
      const problems = [
        ...sourceProblems,
        ...result.problems.map((p): SourcedProblem => ({ ...p, source: p.source ?? originOf(p) })),
      ];
      for (const p of problems) log.warn("config problem", { ...p });
      this.#problems.set(problems.length);
      const cache = this.options.cache;
      if (this.options.program) {
        stage = "program";
        this.options.program(result, input);
      } else if (this.#lastIR && sameRouting(result.ir, this.#lastIR)) {
        stage = "endpoints";
        cache.setEndpoints(this.options.nodeId, translateEndpoints(result.ir.clusters));
      } else {
        stage = "translate";
        const resources = this.#reuse.apply(
          translate(result.ir, this.options.translate, this.#translateMemo),
        );
        this.#lastResources = resources;
        this.#publish(resources);
      }
      this.#lastIR = result.ir;
      const served = this.options.nodeId === undefined
        ? cache.getDefaultSnapshot()
        : cache.getSnapshot(this.options.nodeId);
      this.#status = {
        revision: input.revision,
        version: served?.version,
        servedRevision: input.revision,
        objects: this.#mergeStatuses(result.statuses),
        problems,
      };
      stage = "serve";
      this.options.onServed?.(result);
      this.#applied.inc({ result: "served" });
      log.info("config applied", {
        revision: input.revision,
        version: served?.version,
        listeners: result.ir.listeners.length,
        clusters: result.ir.clusters.length,
        meshServices: result.mesh.services.length,
        problems: problems.length,
      });
    } catch (e) {
      const again = () => this.#newest && this.apply(this.#newest);
      const cannot = (e: Error) =>
        log.error("cannot load the CEL library; the config needing it is not served", {
          revision: input.revision,
          error: e.message,
        });
      if (stage === "resolve" && loadCelOnDemand(e, this.resolveState.cel, again, cannot)) {
        log.info("loading the CEL library for the config's CRD rules, then applying it", {
          revision: input.revision,
        });
        return;
      }
      const error = `${stage} failed: ${(e as Error).message}`;
      this.#failures.inc({ stage });
      this.#applied.inc({ result: "failed" });
      log.error("config not served; the last good config keeps serving", {
        revision: input.revision,
        error,
      });
      this.#status = {
        ...this.#status,
        revision: input.revision,
        problems: sourceProblems,
        error,
      };
    } finally {
      this.#duration.observe((performance.now() - started) / 1000);
    }
  }
}
