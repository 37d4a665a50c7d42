/**
 * The xDS snapshot cache: one immutable {@link Snapshot} per node id, plus a default snapshot for
 * node ids without their own (the standalone agent serves one config to every Envoy). Setting a
 * snapshot whose content is unchanged notifies nobody, so an unchanged input causes no push.
 * @module
 */
import { type InvalidResource, type NamedResource, Snapshot } from "./snapshot.ts";

export {
  type EncodedResource,
  Encodings,
  hashOf,
  type InvalidResource,
  type NamedResource,
  pushOrder,
  type Resources,
  Snapshot,
  type SummaryItem,
  type TypeResources,
  versionOf,
} from "./snapshot.ts";

/** Called with a node's effective snapshot whenever its content changes. */
export type SnapshotListener = (snapshot: Snapshot) => void;

/** Per-node snapshots with change subscriptions. */
export class SnapshotCache {
  #snapshots = new Map<string, Snapshot>();
  #default: Snapshot | undefined;
  #listeners = new Map<string, Set<SnapshotListener>>();

  /** Sets a node's own snapshot. Returns true when its content changed (and listeners ran). */
  setSnapshot(nodeId: string, snapshot: Snapshot): boolean {
    const before = this.getSnapshot(nodeId);
    this.#snapshots.set(nodeId, snapshot);
    return this.#notify(nodeId, before);
  }

  /** Sets the default snapshot served to every node without its own. Returns true on change. */
  setDefaultSnapshot(snapshot: Snapshot): boolean {
    const before = new Map([...this.#listeners.keys()].map((n) => [n, this.getSnapshot(n)]));
    const changed = this.#default?.version !== snapshot.version;
    this.#default = snapshot;
    for (const [nodeId, snap] of before) this.#notify(nodeId, snap);
    return changed;
  }

  /** Removes a node's own snapshot; it falls back to the default. */
  clearSnapshot(nodeId: string): void {
    const before = this.getSnapshot(nodeId);
    this.#snapshots.delete(nodeId);
    this.#notify(nodeId, before);
  }

  /** The snapshot a node is served: its own, else the default, else undefined. */
  getSnapshot(nodeId: string): Snapshot | undefined {
    return this.#snapshots.get(nodeId) ?? this.#default;
  }

  /** The default snapshot, if set. */
  getDefaultSnapshot(): Snapshot | undefined {
    return this.#default;
  }

  /**
   * The endpoint fast path: replaces only the EDS resources of a node's own snapshot (or, with
   * nodeId undefined, of the default snapshot). Other types are shared, not re-encoded.
   * Returns true when the content changed.
   */
  setEndpoints(
    nodeId: string | undefined,
    endpoints: readonly NamedResource[],
    onInvalid?: InvalidResource,
  ): boolean {
    const current = nodeId === undefined ? this.#default : this.#snapshots.get(nodeId);
    const next = (current ?? Snapshot.fromResources({})).withEndpoints(endpoints, onInvalid);
    return nodeId === undefined ? this.setDefaultSnapshot(next) : this.setSnapshot(nodeId, next);
  }

  /** Node ids that have their own snapshot. */
  nodeIds(): string[] {
    return [...this.#snapshots.keys()].sort();
  }

  /** Subscribes to changes of a node's effective snapshot. Returns the unsubscribe function. */
  subscribe(nodeId: string, listener: SnapshotListener): () => void {
    let set = this.#listeners.get(nodeId);
    if (!set) this.#listeners.set(nodeId, set = new Set());
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.#listeners.get(nodeId) === set) this.#listeners.delete(nodeId);
    };
  }

  #notify(nodeId: string, before: Snapshot | undefined): boolean {
    const after = this.getSnapshot(nodeId);
    if (!after || after.version === before?.version) return false;
    // Each listener gets the snapshot current when it is called: a listener may set a newer one
    // (a synchronous on-demand handler), which a later listener must not see overtaken by this.
    for (const listener of [...(this.#listeners.get(nodeId) ?? [])]) {
      listener(this.getSnapshot(nodeId) ?? after);
    }
    return true;
  }
}
export { ResourceReuse } from "./reuse.ts";
export { EncodeMetrics } from "./encode_metrics.ts";
