/**
 * Demand-scoped snapshots: per node proxy, the dependency set (seeds ∪ on-demand requests, closed
 * over route backends) and its translated resources (VHDS virtual hosts included). With capture
 * (`translate.capture`) every node's capture listeners and route tables cover every VIP service,
 * so a routing change anywhere re-translates every node, while clusters stay demand-scoped: the
 * capture chains fetch a cold one over on-demand CDS ({@link NodeSnapshots.onDemand}). {@link NodeSnapshots} keeps that state and,
 * when the mesh changes, re-translates only the nodes whose set holds a changed service (EDS
 * alone when only endpoints changed); unchanged content gives identical resources, which the
 * snapshot cache turns into no push. Each node is translated for what its Envoy advertised on
 * its xDS stream ({@link NodeSnapshots.onNode}): internal listeners only for an Envoy whose
 * bootstrap enables them, so an adopted Envoy from an older bootstrap is never sent config it
 * rejects.
 * @module
 */
import type { MeshIR, NodeView } from "../../lib/ir/mod.ts";
import { udpAuthorities, udpTargets } from "../../lib/ir/mod.ts";
import {
  type EncodeMetrics,
  Encodings,
  type InvalidResource,
  ResourceReuse,
  Snapshot,
  type SnapshotCache,
} from "../xds/cache/mod.ts";
import { INTERNAL_LISTENER, type NodeHandler, type OnDemandHandler } from "../xds/server/mod.ts";
import type { NamedResource } from "../xds/translate/mod.ts";
import {
  type NodeInboundPorts,
  nodeInboundPorts,
  nodeNamespaces,
  type NodeResources,
  type NodeTranslateOptions,
  translateNode,
} from "../xds/translate/node/mod.ts";
import { onDemandRequests } from "./on_demand_names.ts";
import {
  EndpointMemo,
  inboundKey,
  retranslateEndpoints,
  retranslateNode,
  sameClosure,
} from "./incremental.ts";
import {
  indexMesh,
  type MeshIndex,
  type NodeDemand,
  requestedAuthority,
  scopedView,
  serviceFingerprints,
} from "./demand.ts";

export { type NodeDemand, scopedView } from "./demand.ts";

/** Pure: every node's resources for `mesh`, keyed by node id. */
export function nodeSnapshots(
  mesh: MeshIR,
  demands: readonly NodeDemand[],
  options: NodeTranslateOptions = {},
): Map<string, NodeResources> {
  const index = indexMesh(mesh);
  return new Map(
    demands.map((d) => [d.view.nodeId, translateNode(mesh, scopedView(index, d), options)]),
  );
}

/** Options of {@link NodeSnapshots}. */
export interface NodeSnapshotsOptions {
  /** Where each node's snapshot goes (optional: without it, read `resources()`). */
  cache?: SnapshotCache;
  /** Translation knobs (egress port, on-demand timeout, …). */
  translate?: NodeTranslateOptions;
  /** A resource that does not fit its schema is reported here and left out of the snapshot. */
  onInvalid?: InvalidResource;
  /** Counts what each snapshot encoded anew and reused (`aether_xds_resources_*_total`). */
  encodeMetrics?: EncodeMetrics;
}

const empty: NodeResources = {
  listeners: [],
  routes: [],
  virtualHosts: [],
  clusters: [],
  endpoints: [],
  secrets: [],
};

interface NodeState {
  view: NodeView;
  requested: Set<string>;
  /** With identity: what each caller (key) asked for. */
  requestedBy: Map<string, Set<string>>;
  /** Authorities that can change this node: its closed set and every name it asked for. */
  watch: Set<string>;
  /** The closed dependency set `resources` was translated with. */
  closed: string[];
  /** With identity: the {@link inboundKey} `resources` was translated with. */
  inbound?: string;
  resources: NodeResources;
  /** The snapshot encoded from `resources` (undefined before the first translation). */
  snapshot?: Snapshot;
  /**
   * Keeps resources deep-equal to the last full translation's the same objects, so the snapshot
   * skips encoding them (capture listeners are large and mostly unchanged; and a mesh revision
   * that changes nothing of this node encodes nothing: e2e/mesh_demand_test.ts).
   */
  reuse?: ResourceReuse;
}

/** Per-node demand state over one mesh, feeding a snapshot cache. */
export class NodeSnapshots {
  #mesh: MeshIR = { services: [], clusters: [] };
  #index: MeshIndex = indexMesh(this.#mesh);
  #fingerprints = serviceFingerprints(this.#index);
  /** With identity: per pod IP, what inbound listeners take in the current mesh. */
  #inbound: NodeInboundPorts | undefined;
  /** With capture: the services the UDP capture listeners send to (every node watches them). */
  #udpWatch: string[] = [];
  #nodes = new Map<string, NodeState>();
  #secrets: NamedResource[] = [];
  /** The SPIFFE IDs holding an SVID, from setSecrets (over the translate options' own). */
  #certified: readonly string[] | undefined;
  /** What each node's Envoy advertised on its latest xDS stream (capabilities.ts), sorted. */
  #capabilities = new Map<string, readonly string[]>();
  /** ClusterLoadAssignments by endpoints array, shared by every node and kept across changes. */
  readonly #endpointMemo = new EndpointMemo();
  /** Encodings shared by every node's snapshots (equal resources are often the same objects). */
  readonly #encodings: Encodings;

  constructor(readonly options: NodeSnapshotsOptions = {}) {
    this.#encodings = new Encodings(options.encodeMetrics);
  }

  /**
   * Replaces the SDS secrets (SVIDs and trust bundles) of every node, and with `certified` the
   * SPIFFE IDs those secrets hold an SVID for. While that set stays the same only the secrets
   * change, so a rotation pushes SDS alone (unchanged resources of the other types give no push);
   * when an identity gains or loses its SVID every node is translated again (the inbound
   * listeners and caller clusters of an identity without one go, see NodeIdentityOptions).
   */
  setSecrets(secrets: readonly NamedResource[], certified?: readonly string[]): void {
    this.#secrets = [...secrets].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    const before = this.#certifiedNow();
    if (certified) this.#certified = [...new Set(certified)].sort();
    const retranslate = this.#certifiedNow()?.join("\n") !== before?.join("\n");
    for (const st of this.#nodes.values()) {
      if (retranslate) {
        this.#translate(st);
        continue;
      }
      st.resources = { ...st.resources, secrets: this.#secrets };
      this.#publish(st);
    }
  }

  /** The SPIFFE IDs translated as holding an SVID (undefined: every one). */
  #certifiedNow(): readonly string[] | undefined {
    return this.#certified ?? this.options.translate?.identity?.certified;
  }

  /**
   * Replaces the mesh. Nodes whose set (or requests) holds a service whose routing changed are
   * re-translated; nodes where only endpoints changed get new EDS only. Returns the node ids
   * whose resources were recomputed, sorted.
   */
  setMesh(mesh: MeshIR): string[] {
    const index = indexMesh(mesh);
    const fingerprints = serviceFingerprints(index, {
      index: this.#index,
      fingerprints: this.#fingerprints,
    });
    const routing = new Set<string>();
    const endpoints = new Set<string>();
    for (const a of new Set([...this.#fingerprints.keys(), ...fingerprints.keys()])) {
      const before = this.#fingerprints.get(a);
      const after = fingerprints.get(a);
      if (before?.routing !== after?.routing) routing.add(a);
      else if (before?.endpoints !== after?.endpoints) endpoints.add(a);
    }
    const before = this.#index;
    this.#mesh = mesh;
    this.#index = index;
    this.#fingerprints = fingerprints;
    this.#inbound = this.options.translate?.identity ? nodeInboundPorts(mesh) : undefined;
    this.#udpWatch = this.options.translate?.capture
      ? udpAuthorities(udpTargets(mesh), index.clusterAuthority)
      : [];
    const changed = new Set([...routing, ...endpoints]);
    const memo = this.#endpointMemo;
    const touched: string[] = [];
    // Capture listeners and their route tables cover every VIP service of the mesh: a routing
    // change anywhere re-translates every node in full (clusters stay demand-scoped).
    const everywhere = this.options.translate?.capture !== undefined && routing.size > 0;
    for (const [nodeId, st] of this.#nodes) {
      const watched = [...st.watch];
      if (everywhere || this.#inboundMoved(st)) this.#translate(st);
      else if (watched.some((a) => routing.has(a))) this.#translate(st, before, changed, memo);
      else if (watched.some((a) => endpoints.has(a))) {
        this.#updateEndpoints(st, before, endpoints, memo);
      } else continue;
      touched.push(nodeId);
    }
    return touched.sort();
  }

  /** Whether the node's pods back other Service ports than when it was last translated. */
  #inboundMoved(st: NodeState): boolean {
    return this.#inbound !== undefined && inboundKey(this.#inbound, st.view) !== st.inbound;
  }

  /** Adds or replaces a node's view (pods and seed dependencies) and translates it. */
  setView(view: NodeView): void {
    const st = this.#nodes.get(view.nodeId);
    const state: NodeState = {
      view,
      requested: st?.requested ?? new Set(),
      requestedBy: st?.requestedBy ?? new Map(),
      watch: new Set(),
      closed: [],
      resources: st?.resources ?? empty,
      snapshot: undefined,
      reuse: st?.reuse,
    };
    this.#nodes.set(view.nodeId, state);
    this.#translate(state);
  }

  /**
   * Records what the node's Envoy advertised (`aether.capabilities` in its node metadata) and,
   * when that changes what the node gets, re-translates it. Capabilities of a node without a
   * view yet are kept for its first translation. Returns true when the node was re-translated.
   */
  setCapabilities(nodeId: string, capabilities: readonly string[]): boolean {
    const next = [...new Set(capabilities)].sort();
    const prev = this.#capabilities.get(nodeId) ?? [];
    this.#capabilities.set(nodeId, next);
    const st = this.#nodes.get(nodeId);
    if (!st || next.join("\n") === prev.join("\n")) return false;
    this.#translate(st);
    return true;
  }

  /** The capabilities the node's Envoy advertised (empty before its first xDS stream). */
  capabilities(nodeId: string): readonly string[] {
    return this.#capabilities.get(nodeId) ?? [];
  }

  /**
   * The xDS server's node hook: what all the node's open streams advertised (their intersection:
   * an older and a newer Envoy may share a node id), on each stream's open and on a close that
   * leaves others open; the node's snapshot is re-translated for it synchronously.
   */
  readonly onNode: NodeHandler = (nodeId, capabilities) => {
    this.setCapabilities(nodeId, capabilities);
  };

  /** The translation options for one node: the shared ones plus what its Envoy can take. */
  #optionsFor(nodeId: string): NodeTranslateOptions {
    const identity = this.options.translate?.identity;
    return {
      ...this.options.translate,
      ...(identity ? { identity: { ...identity, certified: this.#certifiedNow() } } : {}),
      internalListeners: this.capabilities(nodeId).includes(INTERNAL_LISTENER),
    };
  }

  /** Forgets a node (its snapshot stays in the cache until the caller clears it). */
  removeNode(nodeId: string): void {
    this.#nodes.delete(nodeId);
  }

  /**
   * The node's Envoy asked for these Hosts or cluster names on demand: they join its demand for
   * good (a name that is no service yet is watched: it is served once it appears). Returns true
   * when its clusters or virtual hosts changed. Unknown nodes are ignored (false).
   */
  request(nodeId: string, names: readonly string[], caller?: string): boolean {
    const st = this.#nodes.get(nodeId);
    if (!st) return false;
    let mine = caller === undefined ? undefined : st.requestedBy.get(caller);
    if (caller !== undefined && !mine) st.requestedBy.set(caller, mine = new Set());
    const fresh = names.filter((n) => !st.requested.has(n) || (mine && !mine.has(n)));
    if (fresh.length === 0) return false;
    for (const n of fresh) {
      st.requested.add(n);
      mine?.add(n);
    }
    const key = (r: NodeResources) =>
      [...r.clusters, ...r.virtualHosts].map((c) => c.name).join("\n");
    const before = key(st.resources);
    this.#translate(st);
    return key(st.resources) !== before;
  }

  /**
   * The xDS server's on-demand hook: VHDS aliases (`<route config>/<host>`, Envoy's on-demand
   * VHDS) and CDS names (on-demand CDS) grow the node's set; other types are ignored.
   */
  readonly onDemand: OnDemandHandler = (nodeId, typeUrl, names) => {
    for (const [caller, list] of onDemandRequests(typeUrl, names)) {
      this.request(nodeId, list, caller);
    }
  };

  /** The node's current dependency set (sorted authorities), or undefined for an unknown node. */
  dependencies(nodeId: string): string[] | undefined {
    const st = this.#nodes.get(nodeId);
    return st && scopedView(this.#index, this.#demand(st)).dependencies;
  }

  /** The node's current resources, or undefined for an unknown node. */
  resources(nodeId: string): NodeResources | undefined {
    return this.#nodes.get(nodeId)?.resources;
  }

  /** Node ids with a view, sorted. */
  nodeIds(): string[] {
    return [...this.#nodes.keys()].sort();
  }

  #demand(st: NodeState): NodeDemand {
    const demand: NodeDemand = { view: st.view, requested: [...st.requested].sort() };
    if (!this.options.translate?.identity) return demand;
    const requestedBy: Record<string, string[]> = {};
    for (const [k, v] of st.requestedBy) requestedBy[k] = [...v].sort();
    return { ...demand, requestedBy };
  }

  /**
   * Translates the node; with `changed` (the services that changed since `before`), only their
   * resources when its closed set is the same as last time.
   */
  #translate(
    st: NodeState,
    before?: MeshIndex,
    changed?: ReadonlySet<string>,
    memo?: EndpointMemo,
  ): void {
    const prev = st.resources;
    // A change that cannot alter the node's closed set keeps it (no closure walk per node).
    if (
      before && changed && st.snapshot &&
      sameClosure(this.#index, before, st.watch, changed, nodeNamespaces(st.view))
    ) {
      const next = retranslateNode(
        this.#mesh,
        this.#index,
        before,
        { ...st.view, dependencies: st.closed },
        prev,
        changed,
        this.#optionsFor(st.view.nodeId),
        memo,
      );
      if (next) {
        st.resources = next;
        const lists: Partial<NodeResources> = {};
        for (const k of ["virtualHosts", "clusters", "endpoints"] as const) {
          if (next[k] !== prev[k]) lists[k] = next[k];
        }
        st.snapshot = st.snapshot.withTypes(lists, this.options.onInvalid);
        this.options.cache?.setSnapshot(st.view.nodeId, st.snapshot);
        return;
      }
    }
    const demand = this.#demand(st);
    const view = scopedView(this.#index, demand);
    st.watch = new Set([
      ...view.dependencies,
      ...st.view.dependencies,
      ...demand.requested!.map((n) => requestedAuthority(this.#index, n)),
      // Captured UDP ports' clusters are on every node, warm: their endpoints are watched too.
      ...this.#udpWatch,
    ]);
    st.closed = view.dependencies;
    if (this.#inbound) st.inbound = inboundKey(this.#inbound, st.view);
    const fresh = translateNode(
      this.#mesh,
      view,
      this.#optionsFor(st.view.nodeId),
      (c) => this.#endpointMemo.get(c),
    );
    st.reuse ??= new ResourceReuse();
    st.resources = { ...(st.reuse ? st.reuse.apply(fresh) : fresh), secrets: this.#secrets };
    this.#publish(st);
  }

  #publish(st: NodeState): void {
    st.snapshot = Snapshot.fromResources(st.resources, this.options.onInvalid, this.#encodings);
    this.options.cache?.setSnapshot(st.view.nodeId, st.snapshot);
  }

  /** The endpoint fast path: the same clusters, new ClusterLoadAssignments for `changed` only. */
  #updateEndpoints(
    st: NodeState,
    before: MeshIndex,
    changed: ReadonlySet<string>,
    memo: EndpointMemo,
  ): void {
    const prev = st.resources;
    st.resources = retranslateEndpoints(this.#index, before, prev, changed, memo);
    if (st.resources === prev || !st.snapshot) return;
    st.snapshot = st.snapshot.withEndpoints(st.resources.endpoints, this.options.onInvalid);
    this.options.cache?.setSnapshot(st.view.nodeId, st.snapshot);
  }
}
