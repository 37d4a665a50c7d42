/**
 * The open streams of each node and the capabilities they share. Two Envoys can hold streams
 * under one node id at once (a rolling upgrade of the node proxy, or a hot restart, which keeps
 * the node id): one started from an older bootstrap may lack a capability the newer one
 * advertises. A node is translated for what every one of its open streams can take (the
 * intersection), so the older Envoy is never sent config it rejects; when it goes, the newer
 * one gets the full config. The latest stream to open is the node's current stream (ACKs,
 * readiness); when it closes, the latest of the others takes over.
 * @module
 */

/** What a node's open streams share, and who lacks what. */
export interface CapabilityView {
  /** The capabilities every stream advertised (sorted): what the node is translated for. */
  shared: string[];
  /**
   * Per capability some stream has and another lacks: how many streams lack it (sorted by name).
   */
  lacking: Map<string, number>;
}

/** Pure: the intersection of the streams' capabilities and, per missing one, who lacks it. */
export function capabilityView(streams: readonly (readonly string[])[]): CapabilityView {
  const union = [...new Set(streams.flat())].sort();
  const lacking = new Map<string, number>();
  const shared: string[] = [];
  for (const cap of union) {
    const without = streams.filter((s) => !s.includes(cap)).length;
    if (without === 0) shared.push(cap);
    else lacking.set(cap, without);
  }
  return { shared, lacking };
}

/** A stream as this bookkeeping sees it. */
export interface CapableStream {
  readonly nodeId: string;
  readonly capabilities: readonly string[];
}

/** The open streams of every node, in the order they opened. */
export class NodeStreams<S extends CapableStream> {
  readonly #byNode = new Map<string, S[]>();

  /** Adds an open stream; it becomes its node's current stream. */
  add(stream: S): void {
    const list = this.#byNode.get(stream.nodeId) ?? [];
    this.#byNode.set(stream.nodeId, [...list.filter((s) => s !== stream), stream]);
  }

  /** Removes a stream. Returns false when it was not open. */
  remove(stream: S): boolean {
    const list = this.#byNode.get(stream.nodeId) ?? [];
    if (!list.includes(stream)) return false;
    const rest = list.filter((s) => s !== stream);
    if (rest.length) this.#byNode.set(stream.nodeId, rest);
    else this.#byNode.delete(stream.nodeId);
    return true;
  }

  /** The node's current stream: the latest still open. */
  current(nodeId: string): S | undefined {
    return this.#byNode.get(nodeId)?.at(-1);
  }

  /** The node's open streams, oldest first. */
  streams(nodeId: string): readonly S[] {
    return this.#byNode.get(nodeId) ?? [];
  }

  /** What the node's open streams share (see {@link capabilityView}). */
  view(nodeId: string): CapabilityView {
    return capabilityView(this.streams(nodeId).map((s) => s.capabilities));
  }

  /** Node ids with an open stream, sorted. */
  nodeIds(): string[] {
    return [...this.#byNode.keys()].sort();
  }

  /** Every open stream lacking a capability another stream of its node has, per capability. */
  lacking(): Map<string, number> {
    const total = new Map<string, number>();
    for (const id of this.#byNode.keys()) {
      for (const [cap, n] of this.view(id).lacking) total.set(cap, (total.get(cap) ?? 0) + n);
    }
    return total;
  }
}
