/**
 * The engine: one pipeline for every role. Sources in (one, or several merged by origin), resolve
 * with the engine's own ResolveState, and the same result out to a listed set of sinks, each
 * keeping its own last good. The edge, the node role, the controller and `agent translate` are
 * compositions of it (docs/architecture.md).
 *
 * ```ts
 * const engine = new Engine({ logger, metrics, resolve: { meshDomain }, sinks: [xds, dns] });
 * await source.start((revision) => engine.apply(revision));
 * ```
 * @module
 */
export { Engine, type EngineOptions, withOrigins } from "./engine.ts";
export { MergedSource, mergeRevisions, type Partition } from "./merged_source.ts";
export type { EngineStatus, Resolved, Sink, SinkStatus, SourcedProblem } from "./types.ts";
