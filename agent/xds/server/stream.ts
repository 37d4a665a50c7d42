/**
 * What SotW and delta ADS streams share: the node's snapshot subscription, per-type
 * subscriptions and nonces, ACK/NACK bookkeeping, make-before-break push ordering and readiness.
 * @module
 */
import type { Logger } from "../../../lib/log/mod.ts";
import {
  type EncodedResource,
  pushOrder,
  type Snapshot,
  type SnapshotCache,
  versionOf,
} from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";
import { nodeCapabilities } from "./capabilities.ts";
import type { NodeInfo, RpcStatus } from "./service.ts";
import type { StreamStatus, TrackedStream, XdsTracker } from "./tracker.ts";
import { openNamespaces, vhdsAliases, vhdsSelect } from "./vhds.ts";

/** What a stream needs from its server. */
export interface StreamDeps {
  cache: SnapshotCache;
  tracker: XdsTracker;
  logger: Logger;
  /** Monotonic milliseconds; injectable for tests. */
  now: () => number;
  /** Wall clock for NACK records; injectable for tests. */
  clock: () => Date;
  /** Called when a delta client subscribes to names its snapshot lacks (see OnDemandHandler). */
  onDemand?: OnDemandHandler;
  /** Called with a stream's node before anything is sent to it (see NodeHandler). */
  onNode?: NodeHandler;
}

/**
 * Called with the node of a new stream (its first request), before the stream reads the node's
 * snapshot, and again when one of the node's streams closes while others stay open. The
 * capabilities are those every open stream of the node advertised (node_streams.ts): a handler
 * that sets a new snapshot for the node (synchronously) has it served from the first response
 * on, e.g. one translated for what all the node's Envoys can take.
 */
export type NodeHandler = (nodeId: string, capabilities: readonly string[]) => void;

/**
 * Asked when a delta client subscribes to resource names its node's snapshot lacks (Envoy's
 * on-demand CDS asks for a cluster by name). The handler may set a new snapshot for the node
 * (synchronously or before its promise settles); the stream then sends what exists and announces
 * the rest in `removed_resources`, so the client's wait ends at once.
 */
export type OnDemandHandler = (
  nodeId: string,
  typeUrl: string,
  names: string[],
) => void | Promise<void>;

/** Per-type state of one stream. */
export interface TypeState {
  wildcard: boolean;
  names: Set<string>;
  /** Nonce of the response awaiting ACK/NACK, if any. */
  nonce?: string;
  /** Nonce of the latest response sent; a request carrying another one is stale. */
  lastNonce?: string;
  sentVersion?: string;
  sentAt?: number;
  ackedVersion?: string;
  /** The version (hash) of each resource the client has been sent (or, delta, says it has). */
  known: Map<string, string>;
  /** `known` as of the outstanding response. */
  inflight: ReadonlyMap<string, string>;
  /** `known` as of the last ACKed response. */
  acked: ReadonlyMap<string, string>;
  /** The selection's version for one snapshot; cleared when the subscription changes. */
  memo?: { snapshot: Snapshot; version: string };
  /** Send the selection again even if the client has this version (EDS after CDS). */
  resend?: boolean;
}

/** How long an unanswered CDS/EDS/SDS response may hold back LDS and RDS. */
export const gateTimeoutMs = 2000;

/** Types every ADS client subscribes to with a wildcard (their removals come by omission). */
export const wildcardTypes: ReadonlySet<string> = new Set([TypeUrl.listener, TypeUrl.cluster]);
/**
 * Whether a request without names subscribes to every resource of its type: the wildcard types,
 * and SRDS, whose scopes Envoy asks for without names and takes all of.
 */
export const emptyIsWildcard = (typeUrl: string): boolean =>
  wildcardTypes.has(typeUrl) || typeUrl === TypeUrl.scopedRoute;
/** Types held back while a cluster, endpoint or secret push awaits its ACK (make-before-break). */
const gatedTypes: ReadonlySet<string> = new Set([
  TypeUrl.listener,
  TypeUrl.scopedRoute,
  TypeUrl.route,
  TypeUrl.virtualHost,
]);

/** The base of an ADS stream; subclasses parse requests and build responses. */
export abstract class AdsStream implements TrackedStream {
  abstract readonly mode: "sotw" | "delta";
  nodeId = "";
  /** What the node advertised in its metadata (capabilities.ts). */
  capabilities: string[] = [];
  protected snapshot: Snapshot | undefined;
  protected readonly types = new Map<string, TypeState>();
  #nonce = 0;
  #unsubscribe: (() => void) | undefined;
  #closed = false;
  #gateTimer: ReturnType<typeof setTimeout> | undefined;
  /** Since when VHDS has been held back for endpoints the client has not ACKed yet. */
  #coldSince: number | undefined;

  constructor(protected readonly deps: StreamDeps) {}

  /** Binds the stream to its node on the first request. Returns false when it cannot. */
  protected attach(node: NodeInfo | null | undefined): boolean {
    if (this.#unsubscribe) return true;
    if (this.#closed) return false;
    this.nodeId = node?.id ?? "";
    this.capabilities = nodeCapabilities(node);
    const shared = this.deps.tracker.open(this);
    this.#nodeChanged(shared);
    this.snapshot = this.deps.cache.getSnapshot(this.nodeId);
    this.#unsubscribe = this.deps.cache.subscribe(this.nodeId, (s) => {
      this.snapshot = s;
      this.pump();
    });
    this.deps.logger.info("stream opened", {
      node: this.nodeId,
      mode: this.mode,
      capabilities: this.capabilities,
      node_capabilities: shared,
    });
    return true;
  }

  /** Ends the stream's subscriptions (client went away or server closing). */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearTimeout(this.#gateTimer);
    this.#unsubscribe?.();
    const shared = this.deps.tracker.close(this);
    if (this.nodeId) this.deps.logger.info("stream closed", { node: this.nodeId, mode: this.mode });
    // The node's other streams may now share more (the older Envoy went): re-translate for them.
    if (shared) this.#nodeChanged(shared);
  }

  /** Tells the node hook what the node's open streams share now. */
  #nodeChanged(shared: readonly string[]): void {
    try {
      this.deps.onNode?.(this.nodeId, shared);
    } catch (e) {
      this.deps.logger.error("node hook failed", { node: this.nodeId, error: String(e) });
    }
  }

  /** Whether close() ran. */
  get closed(): boolean {
    return this.#closed;
  }

  protected state(typeUrl: string): TypeState {
    let st = this.types.get(typeUrl);
    if (!st) {
      st = {
        wildcard: false,
        names: new Set(),
        known: new Map(),
        inflight: new Map(),
        acked: new Map(),
      };
      this.types.set(typeUrl, st);
    }
    return st;
  }

  protected nextNonce(): string {
    return String(++this.#nonce);
  }

  /** Whether the client has asked for anything of this type. */
  protected subscribed(st: TypeState): boolean {
    return st.wildcard || st.names.size > 0;
  }

  /** The resources of a type that the subscription selects, from the current snapshot. */
  protected selected(typeUrl: string, st: TypeState) {
    const items = this.snapshot?.resources(typeUrl).items ?? new Map();
    if (typeUrl === TypeUrl.virtualHost) {
      const snapshot = this.snapshot;
      const index = snapshot ? () => vhdsAliases(snapshot) : undefined;
      return vhdsSelect(items, st.names, st.wildcard, this.vhdsOpen(), index).selected;
    }
    if (st.wildcard) return [...items.values()];
    return [...st.names].flatMap((n) => items.has(n) ? [items.get(n)!] : []);
  }

  /** The version of what this client should have of a type: the hash of its selection. */
  protected currentVersion(typeUrl: string, st: TypeState): string {
    if (!this.snapshot) return versionOf([]);
    if (st.wildcard) return this.snapshot.typeVersion(typeUrl);
    if (st.memo?.snapshot !== this.snapshot) {
      st.memo = { snapshot: this.snapshot, version: versionOf(this.selected(typeUrl, st)) };
    }
    return st.memo.version;
  }

  /**
   * Handles the ACK/NACK part of a request carrying a nonce. Returns false for a stale nonce (not
   * our latest response; the request's ACK/NACK is then ignored). A request repeating the latest,
   * already settled nonce is a subscription change only.
   */
  protected settle(typeUrl: string, st: TypeState, nonce: string, error?: RpcStatus | null) {
    if (nonce !== st.lastNonce) return false;
    if (nonce !== st.nonce) return true;
    const latency = (this.deps.now() - (st.sentAt ?? this.deps.now())) / 1000;
    this.deps.tracker.metrics.ackLatency.observe(latency, { type_url: typeUrl });
    st.nonce = undefined;
    this.deps.logger.debug(error ? "nack" : "ack", {
      node: this.nodeId,
      type_url: typeUrl,
      version: st.sentVersion,
      ms: Math.round(latency * 1e4) / 10,
    });
    if (error) {
      this.deps.tracker.nack(this.nodeId, {
        typeUrl,
        version: st.sentVersion ?? "",
        errorDetail: error.message ?? `code ${error.code ?? "?"}`,
        at: this.deps.clock(),
      });
    } else {
      st.ackedVersion = st.sentVersion;
      st.acked = st.inflight;
    }
    return true;
  }

  /**
   * EDS follows CDS. Envoy subscribes a new or updated EDS cluster to its ClusterLoadAssignment
   * by name; when another cluster already watches that name (per-caller clusters share their
   * service's, `eds_cluster_config.service_name`) Envoy asks for nothing and is sent nothing, so
   * the cluster warms only at its initial fetch timeout (15 s, from Envoy's EDS cache). So the
   * assignment of every EDS cluster a CDS response carries is sent again right after it (ADS is
   * ordered: Envoy has made the cluster's watch by then).
   */
  protected resendEndpointsOf(clusters: readonly EncodedResource[]): void {
    const eds = this.types.get(TypeUrl.endpoint);
    const items = this.snapshot?.resources(TypeUrl.endpoint).items;
    if (!eds || !items) return;
    for (const c of clusters) {
      const config = c.resource.eds_cluster_config as { service_name?: string } | undefined;
      if (!config) continue;
      const name = config.service_name || c.name;
      if (!items.has(name) || !eds.known.has(name)) continue;
      eds.known.delete(name);
      eds.resend = true;
    }
  }

  /** Records that a response is out, awaiting its ACK. */
  protected sent(typeUrl: string, st: TypeState, version: string, nonce: string): void {
    st.resend = false;
    st.nonce = st.lastNonce = nonce;
    st.sentVersion = version;
    st.sentAt = this.deps.now();
    st.inflight = new Map(st.known);
    this.deps.tracker.metrics.pushes.inc({ type_url: typeUrl });
    this.deps.logger.debug("push", { node: this.nodeId, type_url: typeUrl, version, nonce });
  }

  /**
   * Sends what changed, in make-before-break order (SDS, CDS, EDS, then LDS, RDS, VHDS). At most
   * one response per type is in flight; LDS, RDS and VHDS wait until no SDS/CDS/EDS response
   * awaits its ACK (at most {@link gateTimeoutMs}, as a client need not ACK a type it stopped
   * watching), so new clusters are warm before listeners and routes point at them. VHDS also
   * waits for an RDS response in flight and for every endpoint resource to be ACKed.
   */
  protected pump(): void {
    if (this.#closed || !this.snapshot) return;
    let gate: TypeState | undefined;
    let coldSince: number | undefined;
    const extra = [...this.types.keys()].filter((t) => !pushOrder.includes(t));
    for (const typeUrl of [...pushOrder, ...extra]) {
      const st = this.types.get(typeUrl);
      if (!st) continue;
      // VHDS also waits for RDS: a route configuration's VHDS watch exists once it is applied.
      const vhds = typeUrl === TypeUrl.virtualHost && !st.nonce;
      const cold = vhds && this.#endpointsCold();
      if (cold) coldSince = this.#coldSince;
      const held = cold || (vhds && !!this.types.get(TypeUrl.route)?.nonce);
      if (!st.nonce && !held && !(gate && gatedTypes.has(typeUrl))) {
        try {
          this.push(typeUrl, st);
        } catch (e) {
          this.deps.logger.error("push failed", {
            node: this.nodeId,
            type_url: typeUrl,
            error: String(e),
          });
        }
      }
      const age = this.deps.now() - (st.sentAt ?? 0);
      if (st.nonce && !gatedTypes.has(typeUrl) && age < gateTimeoutMs) gate ??= st;
    }
    const since = gate?.sentAt ?? coldSince;
    if (since !== undefined && !this.#gateTimer) {
      const wait = gateTimeoutMs - (this.deps.now() - since) + 1;
      this.#gateTimer = setTimeout(() => {
        this.#gateTimer = undefined;
        this.pump();
      }, Math.max(wait, 1));
    }
    this.checkReady();
  }

  /** The route configurations whose virtual hosts a wildcard VHDS stream sends now. */
  protected vhdsOpen(): Set<string> {
    const routes = this.snapshot?.resources(TypeUrl.route).items ?? new Map();
    return openNamespaces(routes, this.types.get(TypeUrl.route)?.acked ?? new Map());
  }

  /**
   * VHDS make-before-break: whether a virtual host must wait because some endpoints of the
   * snapshot are not ACKed yet (Envoy subscribes to a new cluster's endpoints only after it ACKs
   * the cluster, so the CDS gate alone would let a vhost overtake them). Gives up after
   * {@link gateTimeoutMs}, like the gate.
   */
  #endpointsCold(): boolean {
    const eds = this.types.get(TypeUrl.endpoint);
    const items = this.snapshot?.resources(TypeUrl.endpoint).items;
    const cold = !!items && [...items.values()].some((r) => eds?.acked.get(r.name) !== r.hash);
    if (!cold) {
      this.#coldSince = undefined;
      return false;
    }
    this.#coldSince ??= this.deps.now();
    return this.deps.now() - this.#coldSince < gateTimeoutMs;
  }

  /** Sends a response for one type if the client's view differs from the snapshot. */
  protected abstract push(typeUrl: string, st: TypeState): void;

  /** Reports readiness to the tracker when every subscribed type has ACKed the snapshot. */
  protected checkReady(): void {
    if (this.snapshot && this.isReady()) this.deps.tracker.ready(this, this.snapshot.version);
  }

  /** Whether LDS, CDS and every other subscribed type ACKed the current snapshot's content. */
  isReady(): boolean {
    if (!this.snapshot) return false;
    for (const t of wildcardTypes) if (!this.types.has(t)) return false;
    for (const [typeUrl, st] of this.types) {
      if (!this.subscribed(st) && !wildcardTypes.has(typeUrl)) continue;
      if (st.nonce) return false;
      if (st.wildcard) {
        if (st.ackedVersion !== this.currentVersion(typeUrl, st)) return false;
      } else if (this.selected(typeUrl, st).some((r) => st.acked.get(r.name) !== r.hash)) {
        return false;
      }
    }
    return true;
  }

  /** The version of a type the client last ACKed. */
  ackedVersion(typeUrl: string): string | undefined {
    return this.types.get(typeUrl)?.ackedVersion;
  }

  /** This stream's state, for `/debug/xds`. */
  describe(): StreamStatus {
    return {
      nodeId: this.nodeId,
      mode: this.mode,
      capabilities: this.capabilities,
      snapshotVersion: this.snapshot?.version,
      ready: this.isReady(),
      types: [...this.types].map(([typeUrl, st]) => ({
        typeUrl,
        subscribed: st.wildcard ? "*" : [...st.names].sort(),
        sentVersion: st.sentVersion,
        ackedVersion: st.ackedVersion,
        pendingNonce: st.nonce,
      })),
    };
  }
}
