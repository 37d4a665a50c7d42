/**
 * The engine's contract with its sinks: what one resolved revision carries, what a sink is, and
 * the status the engine keeps.
 * @module
 */
import type { ObjectStatus, Problem, ResolveResult } from "../gatewayapi/mod.ts";
import type { SourceRevision } from "../source/mod.ts";

/** A problem with the file (or other origin) it came from. */
export type SourcedProblem = Problem & { source?: string };

/** One source revision after resolve: what every sink receives. */
export interface Resolved {
  /** The source revision, as the source delivered it. */
  input: SourceRevision;
  /** resolve's output for it: IR, MeshIR, computed statuses (raw, unmerged), problems. */
  result: ResolveResult;
  /** The source's problems and resolve's, each with the origin of its object where known. */
  problems: SourcedProblem[];
}

/**
 * A consumer of resolved revisions: an xDS cache (edge or node role), the DNS records, the
 * controller's status writer, the offline translator's output. A sink keeps its own last good:
 * when `apply` throws, the engine reports it and the sink keeps serving what it had; the other
 * sinks are not affected.
 */
export interface Sink {
  /** Names the sink in logs, metrics (`stage` label) and `/status`. */
  readonly name: string;
  /** Serves one resolved revision. Throws to keep serving the last one it applied. */
  apply(resolved: Resolved): void;
  /** The version the sink serves now (an xDS snapshot version), if it has one. */
  version?(): string | undefined;
}

/** A sink's part of the engine's status. */
export interface SinkStatus {
  /** The source revision the sink serves (its last good). */
  revision?: number;
  /** Why the newest revision is not what it serves (its apply threw). */
  error?: string;
}

/** What the engine reports about the configuration (the `config` part of `/status`). */
export interface EngineStatus {
  /** The last source revision seen. */
  revision: number;
  /** The version the first versioned sink serves (the xDS snapshot version). */
  version?: string;
  /** The newest source revision every sink serves. */
  servedRevision?: number;
  /** Every object's status, merged so a condition keeps its time until its status changes. */
  objects: ObjectStatus[];
  problems: SourcedProblem[];
  /** Set when the last revision is not served by every sink (what keeps serving is older). */
  error?: string;
  /** Per sink, by name. */
  sinks: Record<string, SinkStatus>;
}
