/**
 * Per-node xDS state shared by every stream: which stream currently serves a node, ACKed
 * versions, the last NACK, readiness callbacks and the server's metrics.
 * @module
 */
import type { Logger } from "../../../lib/log/mod.ts";
import type { Counter, Gauge, Histogram, Registry } from "../../../lib/metrics/mod.ts";
import { NodeStreams } from "./node_streams.ts";

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
  /** What the stream's Envoy advertised in its node metadata. */
  readonly capabilities: readonly string[];
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

/** A node's current stream plus what all its open streams share, for `/debug/xds`. */
export interface NodeStreamStatus extends StreamStatus {
  /** How many streams the node has open (two during a rolling upgrade or a hot restart). */
  streams: number;
  /** What every open stream advertised: the capabilities the node is translated for. */
  nodeCapabilities: string[];
}

/** Called when a node has ACKed every type of its current snapshot. */
export type ReadyListener = (snapshotVersion: string) => void;

/** The metrics the xDS server exports. */
export class XdsMetrics {
  readonly streams: Gauge;
  readonly pushes: Counter;
  readonly nacks: Counter;
  readonly ackLatency: Histogram;
  readonly lacking: Gauge;
  constructor(registry: Registry) {
    this.streams = registry.gauge("aether_xds_streams", "Connected ADS streams.");
    this.lacking = registry.gauge(
      "aether_xds_streams_lacking_capability",
      "Open ADS streams lacking a capability another stream of the same node advertises.",
    );
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
  #streams = new NodeStreams<TrackedStream>();
  #all = new Set<TrackedStream>();
  /** Every capability the lacking gauge has had a series for (reset to 0 once none lacks it). */
  #lackingSeries = new Set<string>();
  #nacks = new Map<string, NackRecord>();
  #ready = new Map<string, Set<ReadyListener>>();
  #readyVersion = new Map<string, string>();

  constructor(readonly metrics: XdsMetrics, readonly logger: Logger) {}

  /**
   * A stream identified its node; it becomes the node's current stream. Returns the capabilities
   * all the node's open streams share: what the node must be translated for.
   */
  open(stream: TrackedStream): string[] {
    this.#streams.add(stream);
    this.#all.add(stream);
    this.metrics.streams.set(this.#all.size);
    return this.#capabilitiesChanged(stream.nodeId);
  }

  /**
   * A stream ended. Returns what the node's remaining streams share (undefined when none is
   * left, or the stream was not open); the latest remaining one becomes the current stream.
   */
  close(stream: TrackedStream): string[] | undefined {
    if (!this.#all.delete(stream)) return undefined;
    const wasCurrent = this.#streams.current(stream.nodeId) === stream;
    this.#streams.remove(stream);
    if (wasCurrent) this.#readyVersion.delete(stream.nodeId);
    this.metrics.streams.set(this.#all.size);
    const shared = this.#capabilitiesChanged(stream.nodeId);
    return this.#streams.streams(stream.nodeId).length ? shared : undefined;
  }

  /** Updates the lacking gauge, warns about a node whose streams differ; returns the shared set. */
  #capabilitiesChanged(nodeId: string): string[] {
    const view = this.#streams.view(nodeId);
    for (const [capability, streams] of view.lacking) {
      this.logger.warn(
        "envoys of one node differ in capabilities; translating for the shared ones",
        {
          node: nodeId,
          capability,
          lacking_streams: streams,
          streams: this.#streams.streams(nodeId).length,
          hint: `an Envoy of node ${nodeId} was started from an older bootstrap without ` +
            `${capability}: restart that Envoy with the current bootstrap (or let it drain) ` +
            `and the node gets ${capability} again`,
        },
      );
    }
    const lacking = this.#streams.lacking();
    for (const capability of lacking.keys()) this.#lackingSeries.add(capability);
    for (const capability of this.#lackingSeries) {
      this.metrics.lacking.set(lacking.get(capability) ?? 0, { capability });
    }
    return view.shared;
  }

  /** The version of `typeUrl` the node last ACKed on its current stream. */
  ackedVersion(nodeId: string, typeUrl: string): string | undefined {
    return this.#streams.current(nodeId)?.ackedVersion(typeUrl);
  }

  /** Whether the node has ACKed every type of its current snapshot. */
  isReady(nodeId: string): boolean {
    return this.#streams.current(nodeId)?.isReady() ?? false;
  }

  /** The node's current stream state and what its open streams share, for debugging. */
  status(nodeId: string): NodeStreamStatus | undefined {
    const current = this.#streams.current(nodeId);
    if (!current) return undefined;
    return {
      ...current.describe(),
      streams: this.#streams.streams(nodeId).length,
      nodeCapabilities: this.#streams.view(nodeId).shared,
    };
  }

  /** Node ids with a connected stream. */
  nodeIds(): string[] {
    return this.#streams.nodeIds();
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
    if (this.#streams.current(stream.nodeId) !== stream) return;
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
