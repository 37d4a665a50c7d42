/**
 * aether's xDS server: ADS (SotW and delta) over @grpc/grpc-js, serving the snapshots of a
 * {@link SnapshotCache}, on a TCP address and optionally a unix socket.
 *
 * ```ts
 * const server = new XdsServer({ cache, logger, metrics });
 * const port = await server.listen({ host: "127.0.0.1", port: 0 });
 * server.onReady("node-1", (version) => console.log("Envoy ACKed", version));
 * await server.close();
 * ```
 *
 * Metrics: `aether_xds_streams` (gauge), `aether_xds_pushes_total{type_url}`,
 * `aether_xds_nacks_total{type_url}`, `aether_xds_ack_latency_seconds{type_url}` (histogram),
 * `aether_xds_streams_lacking_capability{capability}` (gauge: open streams lacking a capability
 * another stream of their node advertises, e.g. an older Envoy during a rolling upgrade).
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import type { SnapshotCache } from "../cache/mod.ts";
import { DeltaStream } from "./delta.ts";
import {
  adsService,
  type DeltaDiscoveryRequest,
  type DeltaDiscoveryResponse,
  type DiscoveryRequest,
  type DiscoveryResponse,
} from "./service.ts";
import { SotwStream } from "./sotw.ts";
import type { AdsStream, NodeHandler, OnDemandHandler, StreamDeps } from "./stream.ts";
import {
  type NackRecord,
  type NodeStreamStatus,
  type ReadyListener,
  XdsMetrics,
  XdsTracker,
} from "./tracker.ts";

export type {
  NackRecord,
  NodeStreamStatus,
  ReadyListener,
  StreamStatus,
  TypeStatus,
} from "./tracker.ts";
export { type CapabilityView, capabilityView } from "./node_streams.ts";
export { envoyBootstrap, type EnvoyBootstrapOptions } from "./bootstrap.ts";
export type { NodeHandler, OnDemandHandler } from "./stream.ts";
export {
  bootstrapCapabilities,
  CAPABILITIES_KEY,
  INTERNAL_LISTENER,
  nodeCapabilities,
} from "./capabilities.ts";

/** Options of {@link XdsServer}. */
export interface XdsServerOptions {
  /** Where snapshots come from; every stream follows its node's snapshot. */
  cache: SnapshotCache;
  /** Log sink (default: component "xds" on stderr). */
  logger?: Logger;
  /** Registry the server's metrics are added to (default: a private one). */
  metrics?: Registry;
  /** Monotonic clock in milliseconds (ACK latency); injectable for tests. */
  now?: () => number;
  /** Wall clock (NACK timestamps); injectable for tests. */
  clock?: () => Date;
  /**
   * On-demand hook (delta streams only): called with the names a client subscribes to that its
   * node's snapshot lacks, e.g. the cluster Envoy's on-demand CDS asks for. Set a new snapshot
   * for the node before returning (or before the promise settles); names still missing then are
   * answered in `removed_resources`, so Envoy fails fast (503) instead of timing out.
   */
  onDemand?: OnDemandHandler;
  /**
   * Called with each new stream's node id and advertised capabilities before anything is sent;
   * set the node's snapshot for them here (synchronously) and the stream serves it from the start.
   */
  onNode?: NodeHandler;
}

/** Where to listen. Port 0 picks an ephemeral port; `unixPath` adds a unix socket. */
export interface ListenOptions {
  /** TCP host (default 127.0.0.1). */
  host?: string;
  /** TCP port (default 0: ephemeral). */
  port?: number;
  /** Also listen on this unix socket path. */
  unixPath?: string;
}

type Call<Req, Res> = grpc.ServerDuplexStream<Req, Res>;

/** The ADS server. */
export class XdsServer {
  readonly #grpc: grpc.Server;
  readonly #tracker: XdsTracker;
  readonly #deps: StreamDeps;
  readonly #streams = new Set<
    { stream: AdsStream; call: grpc.ServerDuplexStream<unknown, unknown> }
  >();

  constructor(options: XdsServerOptions) {
    const logger = options.logger ?? new Logger("xds");
    this.#tracker = new XdsTracker(new XdsMetrics(options.metrics ?? new Registry()), logger);
    this.#deps = {
      cache: options.cache,
      tracker: this.#tracker,
      logger,
      now: options.now ?? (() => performance.now()),
      clock: options.clock ?? (() => new Date()),
      onDemand: options.onDemand,
      onNode: options.onNode,
    };
    this.#grpc = new grpc.Server({ "grpc.max_receive_message_length": 64 << 20 });
    this.#grpc.addService(adsService(), {
      StreamAggregatedResources: (call: Call<DiscoveryRequest, DiscoveryResponse>) =>
        this.#serve(call, new SotwStream(this.#deps, (res) => call.write(res))),
      DeltaAggregatedResources: (call: Call<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) =>
        this.#serve(call, new DeltaStream(this.#deps, (res) => call.write(res))),
    });
  }

  /** Binds the TCP address (and unix socket, if given). Returns the bound TCP port. */
  async listen(options: ListenOptions = {}): Promise<number> {
    const host = options.host ?? "127.0.0.1";
    const target = host.includes(":")
      ? `[${host}]:${options.port ?? 0}`
      : `${host}:${options.port ?? 0}`;
    const port = await this.#bind(target);
    if (options.unixPath) await this.#bind(`unix:${options.unixPath}`);
    this.#deps.logger.info("xds server listening", {
      address: target,
      port,
      unix: options.unixPath,
    });
    return port;
  }

  #bind(target: string): Promise<number> {
    return new Promise((resolve, reject) =>
      this.#grpc.bindAsync(
        target,
        grpc.ServerCredentials.createInsecure(),
        (err, port) =>
          err
            ? reject(new Error(`xds server cannot bind ${target}: ${err.message}`))
            : resolve(port),
      )
    );
  }

  #serve<Req, Res>(call: Call<Req, Res>, stream: AdsStream & { handle(req: Req): void }): void {
    const entry = { stream, call: call as unknown as grpc.ServerDuplexStream<unknown, unknown> };
    this.#streams.add(entry);
    const end = () => {
      this.#streams.delete(entry);
      stream.close();
    };
    call.on("data", (req: Req) => {
      try {
        stream.handle(req);
      } catch (e) {
        this.#deps.logger.error("bad xds request", { node: stream.nodeId, error: String(e) });
        call.destroy(e as Error);
        end();
      }
    });
    call.on("end", () => {
      end();
      call.end();
    });
    call.on("error", (e: Error) => {
      this.#deps.logger.debug("xds stream error", { node: stream.nodeId, error: e.message });
      end();
    });
    call.on("close", end);
    call.on("cancelled", end);
  }

  /** The version of `typeUrl` the node last ACKed (undefined before the first ACK). */
  ackedVersion(nodeId: string, typeUrl: string): string | undefined {
    return this.#tracker.ackedVersion(nodeId, typeUrl);
  }

  /** The node's last NACK (kept after the node recovers, for `/status`). */
  lastNack(nodeId: string): NackRecord | undefined {
    return this.#tracker.lastNack(nodeId);
  }

  /** Whether the node has ACKed every type of its current snapshot (drives `/readyz`). */
  isReady(nodeId: string): boolean {
    return this.#tracker.isReady(nodeId);
  }

  /**
   * Calls `listener` with the snapshot version each time the node has ACKed every type of a new
   * current snapshot. Returns the unsubscribe function.
   */
  onReady(nodeId: string, listener: ReadyListener): () => void {
    return this.#tracker.onReady(nodeId, listener);
  }

  /**
   * Every connected node's current stream state, with how many streams it has open and what
   * they all share, for `/debug/xds`.
   */
  status(): NodeStreamStatus[] {
    return this.#tracker.nodeIds().flatMap((n) => this.#tracker.status(n) ?? []);
  }

  /** Ends every stream and stops listening. */
  async close(): Promise<void> {
    for (const { stream, call } of [...this.#streams]) {
      stream.close();
      call.end();
    }
    this.#streams.clear();
    await new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.#grpc.forceShutdown();
        resolve();
      }, 2000);
      this.#grpc.tryShutdown(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
export { adsService, type DeltaDiscoveryRequest, type DeltaDiscoveryResponse } from "./service.ts";
export { vhdsNamespace } from "./vhds.ts";
export { internalListenerExtension } from "./bootstrap.ts";
