/**
 * The engine: the one pipeline every role runs. Each source revision is resolved once, with the
 * engine's own ResolveState (its memos: a revision after one edit redoes about one object's
 * work; one that only edits a few routes is resolved on the last result, the edit path, and one
 * that only changes ClusterSetEndpoints objects too, the endpoints path: each counted in
 * `aether_resolves_total{path}`), and the same result goes to every sink in order. A sink that
 * throws keeps its own last good and is reported; the other sinks still apply. A revision that
 * fails to resolve reaches no sink: every sink keeps serving. The CEL library (for the CRD rules
 * without a hand predicate) is loaded by the engine when a revision first needs it; that
 * revision, or a newer one, is applied once it has loaded.
 * @module
 */
import type { Logger } from "../log/mod.ts";
import type { Registry } from "../metrics/mod.ts";
import {
  CelNotLoaded,
  type Problem,
  resolveEdit,
  type ResolveOptions,
  type ResolveResult,
  ResolveState,
  servedRouteKinds,
} from "../gatewayapi/mod.ts";
import { objectKey, type SourceRevision } from "../source/mod.ts";
import { ShownStatuses } from "./shown_statuses.ts";
import type { EngineStatus, Resolved, Sink, SourcedProblem } from "./types.ts";

/** Options of {@link Engine}. */
export interface EngineOptions {
  logger: Logger;
  metrics: Registry;
  /** How every revision is resolved (route kinds are cut to what the source can deliver). */
  resolve?: ResolveOptions;
  /** Where each resolved revision goes, in this order. */
  sinks: readonly Sink[];
  /** Clock for condition transition times in `status.objects` (default: the wall clock). */
  now?: () => Date;
  /**
   * Keep `status.objects` (default true). The controller, which merges against the objects the
   * API server holds, and the offline translator, which prints resolve's own, set false.
   */
  showStatuses?: boolean;
  /** Log each problem of each revision as a warning (default true). */
  logProblems?: boolean;
  /** The ResolveState to resolve with (default: a new one, the engine's own). */
  state?: ResolveState;
}

/** Runs resolve once per source revision and hands the result to every sink. */
export class Engine {
  /** The memos of this engine's resolves (its own: other engines never evict them). */
  readonly resolveState: ResolveState;
  #status: EngineStatus = { revision: 0, objects: [], problems: [], sinks: {} };
  #newest?: SourceRevision;
  /** The CEL library's load, while one is under way. */
  #loading?: Promise<void>;
  /** Route kinds served for the last `kinds` a source reported (same array, same options). */
  #served?: { kinds?: readonly string[]; options: ResolveOptions };
  readonly #shown = new ShownStatuses();
  readonly #sinks: Record<string, { revision?: number; error?: string }> = {};
  readonly #applied;
  readonly #failures;
  readonly #duration;
  readonly #problems;
  readonly #resolves;

  constructor(readonly options: EngineOptions) {
    this.resolveState = options.state ?? new ResolveState();
    const names = options.sinks.map((s) => s.name);
    const twice = names.find((n, i) => names.indexOf(n) !== i);
    if (twice) throw new Error(`two sinks are named ${twice}: each needs its own name`);
    for (const n of names) this.#sinks[n] = {};
    const m = options.metrics;
    this.#applied = m.counter(
      "aether_config_revisions_total",
      "Source revisions processed, by result.",
    );
    this.#failures = m.counter(
      "aether_config_failures_total",
      "Source revisions a stage did not apply, by stage (resolve, or the sink's name).",
    );
    this.#duration = m.histogram(
      "aether_config_apply_seconds",
      "Time from source revision to every sink applied.",
    );
    this.#problems = m.gauge("aether_config_problems", "Problems in the current configuration.");
    this.#resolves = m.counter(
      "aether_resolves_total",
      "Source revisions resolved, by path: cold (every object), edit (a few routes on the last), endpoints (ClusterSetEndpoints only, on the last), add (one route inserted, on the last), remove (one route deleted, on the last).",
    );
  }

  /** The current status. */
  get status(): EngineStatus {
    return this.#status;
  }

  /** The newest source revision handed to {@link apply}. */
  get input(): SourceRevision | undefined {
    return this.#newest;
  }

  /**
   * Processes one source revision. Never throws. Returns once it is applied — at once, unless the
   * CEL library must load first: then once the newest revision has been applied after the load.
   */
  apply(input: SourceRevision): Promise<void> {
    this.#newest = input;
    if (this.#loading) return this.#loading;
    if (this.#run(input) !== "needs-cel") return Promise.resolve();
    this.options.logger.info(
      "loading the CEL library for the config's CRD rules, then applying it",
      {
        revision: input.revision,
      },
    );
    this.#loading = this.resolveState.cel.load().then(
      () => {
        this.#loading = undefined;
        this.#run(this.#newest!);
      },
      (e: Error) => {
        this.#loading = undefined;
        this.#fail(this.#newest!, "resolve", `cannot load the CEL library: ${e.message}`);
      },
    );
    return this.#loading;
  }

  /** Applies the newest revision again (a new leader plans against what the server holds now). */
  reapply(): Promise<void> {
    return this.#newest ? this.apply(this.#newest) : Promise.resolve();
  }

  #resolveOptions(input: SourceRevision): ResolveOptions {
    const base = this.options.resolve ?? {};
    if (!this.#served || this.#served.kinds !== input.kinds) {
      // Route kinds the source cannot deliver (their CRD is not installed) are not served.
      this.#served = {
        kinds: input.kinds,
        options: { ...base, routeKinds: servedRouteKinds(input.kinds, base.routeKinds) },
      };
    }
    const admitted = input.admitted ?? base.admitted;
    const options = this.#served.options;
    return admitted === options.admitted ? options : { ...options, admitted };
  }

  /** Resolves and applies one revision; "needs-cel" when it reached a rule needing the library. */
  #run(input: SourceRevision): "done" | "needs-cel" {
    const started = performance.now();
    let result: ResolveResult;
    try {
      const resolved = resolveEdit(input.objects, this.#resolveOptions(input), this.resolveState);
      result = resolved.result;
      this.#resolves.inc({ path: resolved.path });
    } catch (e) {
      if (e instanceof CelNotLoaded && !this.resolveState.cel.loaded) return "needs-cel";
      this.#fail(input, "resolve", (e as Error).message);
      this.#duration.observe((performance.now() - started) / 1000);
      return "done";
    }
    const problems = withOrigins(input, result.problems);
    const log = this.options.logger;
    if (this.options.logProblems ?? true) {
      for (const p of problems) log.warn("config problem", { ...p });
    }
    this.#problems.set(problems.length);
    const resolved: Resolved = { input, result, problems };
    const errors: string[] = [];
    for (const sink of this.options.sinks) {
      const mine = this.#sinks[sink.name];
      try {
        sink.apply(resolved);
        this.#sinks[sink.name] = { revision: input.revision };
      } catch (e) {
        const error = (e as Error).message;
        this.#sinks[sink.name] = { revision: mine.revision, error };
        this.#failures.inc({ stage: sink.name });
        errors.push(`${sink.name} failed: ${error}`);
        log.error("a sink did not apply the config; it keeps serving its last good", {
          sink: sink.name,
          revision: input.revision,
          error,
        });
      }
    }
    const version = this.options.sinks.map((s) => s.version?.()).find((v) => v !== undefined);
    this.#status = {
      revision: input.revision,
      version,
      servedRevision: this.#servedRevision(),
      objects: this.options.showStatuses === false
        ? []
        : this.#shown.show(result.statuses, this.options.now?.() ?? new Date()),
      problems,
      ...(errors.length ? { error: errors.join("; ") } : {}),
      sinks: { ...this.#sinks },
    };
    this.#applied.inc({ result: errors.length ? "failed" : "served" });
    log.info("config applied", {
      revision: input.revision,
      version,
      listeners: result.ir.listeners.length,
      clusters: result.ir.clusters.length,
      meshServices: result.mesh.services.length,
      problems: problems.length,
      ...(errors.length ? { failedSinks: errors.length } : {}),
    });
    this.#duration.observe((performance.now() - started) / 1000);
    return "done";
  }

  /** The newest revision every sink serves (undefined until each has served one). */
  #servedRevision(): number | undefined {
    let min: number | undefined;
    for (const s of Object.values(this.#sinks)) {
      if (s.revision === undefined) return undefined;
      min = min === undefined ? s.revision : Math.min(min, s.revision);
    }
    return min;
  }

  /** A revision no sink applied: its source problems shown, the last good kept everywhere. */
  #fail(input: SourceRevision, stage: string, why: string): void {
    const error = `${stage} failed: ${why}`;
    this.#failures.inc({ stage });
    this.#applied.inc({ result: "failed" });
    this.options.logger.error("config not served; the last good config keeps serving", {
      revision: input.revision,
      error,
    });
    this.#status = {
      ...this.#status,
      revision: input.revision,
      problems: input.problems.map((p) => ({ ...p })),
      error,
    };
  }
}

/** The source's problems and resolve's, each with the origin of its object where the source knows it. */
export function withOrigins(input: SourceRevision, problems: readonly Problem[]): SourcedProblem[] {
  const originOf = (p: Problem) =>
    input.origins.get(
      objectKey({ kind: p.kind, metadata: { namespace: p.namespace, name: p.name } }),
    );
  return [
    ...input.problems.map((p): SourcedProblem => ({ ...p })),
    ...problems.map((p): SourcedProblem => ({ ...p, source: p.source ?? originOf(p) })),
  ];
}
