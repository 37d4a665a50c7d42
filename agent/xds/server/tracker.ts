/**
 * Per-node xDS state shared by every stream: which stream currently serves a node, ACKed
 * versions, the last NACK, readiness callbacks and the server's metrics.
 * @module
 */
import type { Logger } from "../../../lib/log/mod.ts";
import type { Counter, Gauge, Histogram, Registry } from "../../../lib/metrics/mod.ts";

/** A rejected push, as shown on the agent's `/status`. */
export interface NackRecord {
  /** The rejected type. */
  typeUrl: string;
  /** The version Envoy rejected. */
  version: string;
  /** Envoy's error_detail message. */
  errorDetail: string;
  /** When the NACK arrived. */
  at: Date;
}

/** What a tracker needs from a live stream. */
export interface TrackedStream {
  readonly nodeId: string;
  ackedVersion(typeUrl: string): string | undefined;
  isReady(): boolean;
  describe(): StreamStatus;
}

/** Per-type state of one stream, for `/debug/xds`. */
export interface TypeStatus {
  typeUrl: string;
  subscribed: string[] | "*";
  sentVersion?: string;
  ackedVersion?: string;
  pendingNonce?: string;
}

/** One stream's state, for `/debug/xds`. */
export interface StreamStatus {
  nodeId: string;
  mode: "sotw" | "delta";
  /** What the node's bootstrap advertised (`aether.capabilities` in its metadata). */
  capabilities: string[];
  snapshotVersion?: string;
  ready: boolean;
  types: TypeStatus[];
}

/** Called when a node has ACKed every type of its current snapshot. */
export type ReadyListener = (snapshotVersion: string) => void;

/** The metrics the xDS server exports. */
export class XdsMetrics {
  readonly streams: Gauge;
  readonly pushes: Counter;
  readonly nacks: Counter;
  readonly ackLatency: Histogram;
  constructor(registry: Registry) {
    this.streams = registry.gauge("aether_xds_streams", "Connected ADS streams.");
    this.pushes = registry.counter("aether_xds_pushes_total", "xDS responses sent, by type.");
    this.nacks = registry.counter("aether_xds_nacks_total", "xDS responses Envoy rejected.");
    this.ackLatency = registry.histogram(
      "aether_xds_ack_latency_seconds",
      "Time from sending an xDS response to its ACK or NACK.",
    );
  }
}

/** Node-level bookkeeping over all streams. */
export class XdsTracker {
  #streams = new Map<string, TrackedStream>();
  #all = new Set<TrackedStream>();
  #nacks = new Map<string, NackRecord>();
  #ready = new Map<string, Set<ReadyListener>>();
  #readyVersion = new Map<string, string>();

  constructor(readonly metrics: XdsMetrics, readonly logger: Logger) {}

  /** A stream identified its node; it becomes the node's current stream. */
  open(stream: TrackedStream): void {
    this.#streams.set(stream.nodeId, stream);
    this.#all.add(stream);
    this.metrics.streams.set(this.#all.size);
  }

  /** A stream ended. */
  close(stream: TrackedStream): void {
    if (!this.#all.delete(stream)) return;
    if (this.#streams.get(stream.nodeId) === stream) {
      this.#streams.delete(stream.nodeId);
      this.#readyVersion.delete(stream.nodeId);
    }
    this.metrics.streams.set(this.#all.size);
  }

  /** The version of `typeUrl` the node last ACKed on its current stream. */
  ackedVersion(nodeId: string, typeUrl: string): string | undefined {
    return this.#streams.get(nodeId)?.ackedVersion(typeUrl);
  }

  /** Whether the node has ACKed every type of its current snapshot. */
  isReady(nodeId: string): boolean {
    return this.#streams.get(nodeId)?.isReady() ?? false;
  }

  /** The node's current stream state, for debugging. */
  status(nodeId: string): StreamStatus | undefined {
    return this.#streams.get(nodeId)?.describe();
  }

  /** Node ids with a connected stream. */
  nodeIds(): string[] {
    return [...this.#streams.keys()].sort();
  }

  /** Records a NACK: logged, counted and kept for `lastNack`. */
  nack(nodeId: string, record: NackRecord): void {
    this.#nacks.set(nodeId, record);
    this.metrics.nacks.inc({ type_url: record.typeUrl });
    this.logger.warn("envoy rejected config", {
      node: nodeId,
      type_url: record.typeUrl,
      version: record.version,
      error_detail: record.errorDetail,
    });
  }

  /** The node's most recent NACK, if any. */
  lastNack(nodeId: string): NackRecord | undefined {
    return this.#nacks.get(nodeId);
  }

  /** Subscribes to "node ACKed its whole current snapshot". Returns the unsubscribe function. */
  onReady(nodeId: string, listener: ReadyListener): () => void {
    let set = this.#ready.get(nodeId);
    if (!set) this.#ready.set(nodeId, set = new Set());
    set.add(listener);
    return () => set.delete(listener);
  }

  /** A stream reports that its node is ready at a snapshot version; listeners run once each. */
  ready(stream: TrackedStream, snapshotVersion: string): void {
    if (this.#streams.get(stream.nodeId) !== stream) return;
    if (this.#readyVersion.get(stream.nodeId) === snapshotVersion) return;
    this.#readyVersion.set(stream.nodeId, snapshotVersion);
    this.logger.info("node acked snapshot", { node: stream.nodeId, version: snapshotVersion });
    for (const listener of [...(this.#ready.get(stream.nodeId) ?? [])]) {
      try {
        listener(snapshotVersion);
      } catch (e) {
        this.logger.error("ready listener failed", { error: String(e) });
      }
    }
  }
}
