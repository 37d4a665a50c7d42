/**
 * The watcher abstraction every config source implements (files, memory, later the API server and
 * the registry): it delivers whole, numbered revisions of plain Kubernetes-shaped objects (a "snapshot" in aether
 * is only ever an xDS snapshot: agent/xds/cache).
 * @module
 */

import type { KubeObject, Problem } from "../gatewayapi/mod.ts";

/** A Kubernetes-shaped object as a source delivers it (validation happens later, in resolve). */
export type SourceObject = KubeObject;

/** Something wrong with the input that the source found (unparseable YAML, a nameless object). */
export type SourceProblem = Problem & { source: string };

/** One revision of a source: everything it holds at one moment. */
export interface SourceRevision {
  /** Increases by one with every delivered revision. */
  revision: number;
  objects: SourceObject[];
  problems: SourceProblem[];
  /** Where each object came from, keyed by `kind/namespace/name`. */
  origins: Map<string, string>;
  /** Files that fail to parse now and keep serving their last good objects. */
  stale?: StaleFile[];
  /**
   * The kinds this source can deliver now (the API-server source: kinds whose CRD is installed and
   * watched). Route kinds not listed are not served nor advertised; absent = every kind (files).
   */
  kinds?: readonly string[];
  /**
   * The objects were defaulted and validated by the Kubernetes API server (the API-server source
   * sets it): resolve does not admit them again (`ResolveOptions.admitted`). Absent = false.
   */
  admitted?: boolean;
}

/** A file whose current content cannot be used; its last good objects keep serving. */
export interface StaleFile {
  source: string;
  /** Why the current content is not used (the parse problems). */
  reason: string;
  /** When the content that keeps serving was read (ISO time). */
  since: string;
}

/**
 * A producer of revisions. `start` delivers the first revision before it resolves.
 *
 * The same-object contract (every consumer's memos rely on it; the shared contract test in
 * `source_test.ts` checks it): an object that did not change since the previous revision is
 * handed over as the very same object, and an object once handed over is never mutated — a
 * change is a new object. resolve (ResolveState) and the xDS encoder remember work by object
 * identity, so a revision after one edit costs about one object's work.
 */
export interface Source {
  start(onRevision: (revision: SourceRevision) => void): Promise<void>;
  stop(): Promise<void>;
}

/** The key objects are identified by: `kind/namespace/name` (namespace empty when cluster-scoped). */
export function objectKey(
  o: { kind: string; metadata: { namespace?: string; name: string } },
): string {
  return `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`;
}
