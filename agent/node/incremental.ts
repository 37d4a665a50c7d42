/**
 * Incremental node translation, pure: when some services of a node's unchanged dependency set
 * change, only their resources (virtual hosts, clusters, endpoints) are translated again; every
 * other resource is the very object the node had, so the snapshot skips re-encoding it. The
 * result equals a full {@link translateNode} (tested), or `undefined` when it cannot be proven
 * equal cheaply (the caller then translates in full).
 * @module
 */
import type { MeshIR, NodeView } from "../../lib/ir/mod.ts";
import type { IRCluster, IREndpoint } from "../../lib/ir/mod.ts";
import { IdentityMemo } from "../../lib/memo/mod.ts";
import { portOwnedClusters } from "../../lib/ir/mod.ts";
import type { NamedResource } from "../xds/translate/mod.ts";
import {
  localizeEndpoints,
  nodeClusterNames,
  type NodeInboundPorts,
  nodeNamespaces,
  type NodeResources,
  type NodeTranslateOptions,
  translateNode,
} from "../xds/translate/node/mod.ts";
import { translateEndpoints } from "../xds/translate/mod.ts";
import { sortedByName } from "../xds/translate/mod.ts";
import { type MeshIndex, referencedClusters, serviceDependencies } from "./demand.ts";

/**
 * ClusterLoadAssignments by the IR cluster's endpoints array (resolve keeps an unchanged
 * cluster's; withIdentities too), then its name, shared by every node and kept across mesh
 * changes (owned by one NodeSnapshots): an unchanged cluster gives the same resource object, so
 * it is encoded once, not once per node nor again on each change.
 */
export class EndpointMemo {
  readonly memo = new IdentityMemo<IREndpoint[], NamedResource>();

  /** The cluster's assignment, the same object while its endpoints array and name are. */
  get(c: IRCluster): NamedResource {
    const seen = this.memo.peek(c.endpoints);
    const hit = seen?.name === c.name;
    this.memo.count(hit);
    if (hit) return seen!;
    const out = translateEndpoints([c])[0];
    this.memo.set(c.endpoints, out);
    return out;
  }
}

function sharedEndpoints(memo: EndpointMemo | undefined, clusters: IRCluster[]): NamedResource[] {
  if (!memo) return translateEndpoints(clusters);
  return sortedByName(clusters).map((c) => memo.get(c));
}

/** The {@link referencedClusters} of the `changed` services in `index`, sorted. */
function referenced(index: MeshIndex, changed: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const a of changed) {
    const s = index.services.get(a);
    for (const c of s ? referencedClusters(index, s) : []) out.add(c);
  }
  return [...out].sort();
}

/**
 * What the node's inbound listeners read of the mesh's endpoints: per pod (in view order), its IP
 * and the ports that IP backs. A node whose key changed is translated again in full, whatever
 * kind of change it was: a pod whose IP joins a Service's endpoints after its last translation
 * (it became Ready after its SVID arrived) must get its `:15008` listener, which EDS alone never
 * adds; one that leaves them loses it.
 */
export function inboundKey(inbound: NodeInboundPorts, view: Pick<NodeView, "pods">): string {
  return JSON.stringify(
    view.pods.map((p) => p.ip && [p.ip, inbound.ports.get(p.ip), inbound.meshPorts.get(p.ip)]),
  );
}

/**
 * The cluster names the `changed` services own, in either mesh: their port clusters and their
 * UDPRoutes' merged clusters (portOwnedClusters).
 */
function ownedClusters(
  index: MeshIndex,
  before: MeshIndex,
  changed: Iterable<string>,
): Set<string> {
  const out = new Set<string>();
  for (const a of changed) {
    for (const m of [index, before]) {
      for (const p of m.services.get(a)?.ports ?? []) {
        for (const c of portOwnedClusters(p)) out.add(c);
      }
    }
  }
  return out;
}

/** Replaces in `old` the resources `owned` says are stale by those of `fresh` it owns. */
function splice(
  old: readonly NamedResource[],
  fresh: readonly NamedResource[],
  owned: (name: string) => boolean,
): NamedResource[] {
  const kept = old.filter((r) => !owned(r.name));
  if (kept.length === old.length && !fresh.some((r) => owned(r.name))) {
    return old as NamedResource[];
  }
  return sortedByName([...kept, ...fresh.filter((r) => owned(r.name))]);
}

/**
 * A node's resources after `changed` services (authorities) changed, from its previous
 * resources `prev` translated for the same pods and the same closed dependency set. Returns
 * undefined when the set of clusters would differ (then translate in full).
 */
export function retranslateNode(
  mesh: MeshIR,
  index: MeshIndex,
  before: MeshIndex,
  view: NodeView,
  prev: NodeResources,
  changed: ReadonlySet<string>,
  options?: NodeTranslateOptions,
  memo?: EndpointMemo,
): NodeResources | undefined {
  const touched = view.dependencies.filter((a) => changed.has(a));
  if (touched.length === 0) return prev;
  const namespaces = nodeNamespaces(view);
  // Translate the touched services against a mesh of just them and the clusters they reach:
  // the same output for them, without walking the whole mesh once per node.
  const services = touched.map((a) => index.services.get(a)).filter((s) => s !== undefined);
  const reach = nodeClusterNames(services, namespaces, index.clusters);
  const part = translateNode(
    {
      ...mesh,
      services,
      clusters: mesh.clusters.length <= reach.size
        ? mesh.clusters
        : [...reach].sort().map((n) => index.clusters.get(n)!),
    },
    { ...view, dependencies: touched },
    options,
    memo && ((c) => memo.get(c)),
  );
  // The clusters no service owns (ServiceImports') the touched services route to: when that set
  // changed, another service may still route to one dropped (translate in full); else those the
  // node reaches are the touched services' too.
  const refs = referenced(index, touched);
  if (refs.join("\n") !== referenced(before, touched).join("\n")) return undefined;
  const owned = ownedClusters(index, before, touched);
  for (const n of refs) if (reach.has(n)) owned.add(n);
  const ownsCluster = (name: string) => owned.has(name);
  const ownsVhost = (name: string) => ownsCluster(name.slice(name.indexOf("/") + 1));
  const clusters = splice(prev.clusters, part.clusters, ownsCluster);
  // The clusters the touched services reach must all be there (a backend outside the old set
  // would change the set: translate in full). What the others reach is as before.
  if (clusters !== prev.clusters) {
    const have = new Set(clusters.map((c) => c.name));
    for (const n of reach) if (!have.has(n)) return undefined;
  } else if (![...reach].every((n) => prev.clusters.some((c) => c.name === n))) return undefined;
  return {
    ...prev,
    virtualHosts: splice(prev.virtualHosts, part.virtualHosts, ownsVhost),
    clusters,
    endpoints: splice(
      prev.endpoints,
      localizeEndpoints(
        sharedEndpoints(memo, [...reach].map((n) => index.clusters.get(n)!)),
        index.clusters,
        prev.listeners,
      ),
      ownsCluster,
    ),
  };
}

/** The endpoint fast path: new ClusterLoadAssignments for the clusters of `changed` only. */
export function retranslateEndpoints(
  index: MeshIndex,
  before: MeshIndex,
  prev: NodeResources,
  changed: ReadonlySet<string>,
  memo?: EndpointMemo,
): NodeResources {
  const mine = ownedClusters(index, before, changed);
  // And the ServiceImports' clusters they route to (only those the node has are made).
  for (const n of referenced(index, changed)) mine.add(n);
  const owned = (name: string) => mine.has(name);
  const stale = prev.endpoints.filter((e) => owned(e.name)).map((e) => e.name);
  if (stale.length === 0) return prev;
  const names = new Set(stale);
  const fresh = localizeEndpoints(
    sharedEndpoints(
      memo,
      [...names].map((n) => index.clusters.get(n)).filter((c) => c !== undefined),
    ),
    index.clusters,
    prev.listeners,
  );
  return { ...prev, endpoints: splice(prev.endpoints, fresh, owned) };
}

/**
 * Whether a node's closed dependency set is surely unchanged by `changed`: each changed
 * authority it watches exists in both meshes or in neither, with the same route dependencies for
 * the node's namespaces. (Otherwise the caller recomputes the closure.)
 */
export function sameClosure(
  index: MeshIndex,
  before: MeshIndex,
  watch: ReadonlySet<string>,
  changed: ReadonlySet<string>,
  namespaces: readonly string[],
): boolean {
  for (const a of changed) {
    if (!watch.has(a)) continue;
    const now = index.services.get(a), was = before.services.get(a);
    if (!now !== !was) return false;
    if (!now || !was) continue;
    const x = serviceDependencies(index, now, namespaces);
    const y = serviceDependencies(before, was, namespaces);
    if (x.length !== y.length || x.some((d, i) => d !== y[i])) return false;
  }
  return true;
}
