/**
 * Demand scoping, pure: which mesh services a node proxy needs. A node's dependency set is what
 * its pods asked for (seeds and on-demand requests) closed over the routes of the services in
 * the set — a backendRef or mirror outside the set extends it (the spec's "Phase 2 sizing").
 * @module
 */
import { callerBackendClusters, type MeshIR, type MeshService } from "../../lib/ir/mod.ts";
import { portOwnedClusters } from "../../lib/ir/mod.ts";
import type { IRCluster, NodeView } from "../../lib/ir/mod.ts";
import { identityCallerKey, nodeNamespaces } from "../xds/translate/node/mod.ts";

/** Lookups over one MeshIR, built once per mesh version. */
export interface MeshIndex {
  readonly mesh: MeshIR;
  /** Services by authority. */
  readonly services: ReadonlyMap<string, MeshService>;
  /** IR clusters by name. */
  readonly clusters: ReadonlyMap<string, IRCluster>;
  /** The owning service's authority of every service-port cluster. */
  readonly clusterAuthority: ReadonlyMap<string, string>;
  /**
   * For a cluster no service owns (a ServiceImport port's `<name>.<ns>.svc.clusterset.local:<port>`)
   * the first service (by authority) whose producer routes send to it: asking for the cluster on
   * demand asks for that service, whose routes bring the cluster into the node's set.
   */
  readonly referrers: ReadonlyMap<string, string>;
}

/** Indexes a mesh for the functions below. */
export function indexMesh(mesh: MeshIR): MeshIndex {
  const clusterAuthority = new Map<string, string>();
  for (const s of mesh.services) {
    for (const p of s.ports) {
      for (const c of portOwnedClusters(p)) clusterAuthority.set(c, s.authority);
    }
  }
  const referrers = new Map<string, string>();
  for (const s of mesh.services) {
    for (const p of s.ports) {
      // No namespace is named "": its callers get the producer routes.
      for (const c of callerBackendClusters(p, "")) {
        if (!clusterAuthority.has(c) && !referrers.has(c)) referrers.set(c, s.authority);
      }
    }
  }
  return {
    mesh,
    services: new Map(mesh.services.map((s) => [s.authority, s])),
    clusters: new Map(mesh.clusters.map((c) => [c.name, c])),
    clusterAuthority,
    referrers,
  };
}

/**
 * The authority a requested cluster name belongs to: the owner of an IR cluster, the first
 * service whose producer routes send to a cluster no service owns (a ServiceImport's), or for any
 * `<authority>:<port>` spelling (the catch-all turns `Host: a:80` into that name) the authority
 * part. Returned even when no such service exists yet (it may appear later).
 */
export function requestedAuthority(index: MeshIndex, clusterName: string): string {
  const owner = index.clusterAuthority.get(clusterName) ?? index.referrers.get(clusterName);
  if (owner) return owner;
  const m = /^(.*):(\d+)$/.exec(clusterName);
  return m ? m[1] : clusterName;
}

/**
 * Authorities the routes of `svc` send traffic to (backends and mirrors that exist, TCPRoute
 * backends too), for callers
 * in `namespaces` only: consumer routes of namespaces without pods on the node do not count.
 */
export function serviceDependencies(
  index: MeshIndex,
  svc: MeshService,
  namespaces: readonly string[],
): string[] {
  const out = new Set<string>();
  for (const p of svc.ports) {
    for (const ns of namespaces) {
      for (const cluster of callerBackendClusters(p, ns)) {
        const owner = index.clusterAuthority.get(cluster);
        if (owner && owner !== svc.authority) out.add(owner);
      }
    }
  }
  return [...out].sort();
}

/**
 * The dependency set: `seeds` that name existing services, closed over
 * {@link serviceDependencies} for `namespaces`. Sorted.
 */
export function dependencyClosure(
  index: MeshIndex,
  seeds: Iterable<string>,
  namespaces: readonly string[],
): string[] {
  const out = new Set<string>();
  const queue = [...seeds];
  while (queue.length) {
    const authority = queue.pop()!;
    const svc = index.services.get(authority);
    if (!svc || out.has(authority)) continue;
    out.add(authority);
    queue.push(...serviceDependencies(index, svc, namespaces));
  }
  return [...out].sort();
}

/** The namespaces with consumer routes of any kind on the port, and "" (the producer routes). */
function routeNamespaces(p: MeshService["ports"][number]): Set<string> {
  return new Set([
    "",
    ...Object.keys(p.consumerRoutes),
    ...Object.keys(p.consumerTcp ?? {}),
    ...Object.keys(p.consumerTls ?? {}),
    ...Object.keys(p.consumerUdp ?? {}),
  ]);
}

/**
 * The clusters no service owns (a ServiceImport port's) that the routes of `svc` send to, for
 * any caller, sorted: their endpoints and fields are part of the service's fingerprints, so a
 * change of an import's endpoints reaches the nodes whose set holds a service routing to it.
 */
export function referencedClusters(index: MeshIndex, svc: MeshService): string[] {
  const out = new Set<string>();
  for (const p of svc.ports) {
    for (const ns of routeNamespaces(p)) {
      for (const c of callerBackendClusters(p, ns)) {
        if (!index.clusterAuthority.has(c) && index.clusters.has(c)) out.add(c);
      }
    }
  }
  return [...out].sort();
}

/** Fingerprints of {@link serviceFingerprints}, by authority. */
export type Fingerprints = Map<string, { routing: string; endpoints: string }>;

/** Whether two plain objects have the same keys with identical (`===`) values. */
function shallowSame(a: object | undefined, b: object | undefined): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  const ra = a as Record<string, unknown>, rb = b as Record<string, unknown>;
  const keys = Object.keys(ra);
  return keys.length === Object.keys(rb).length &&
    keys.every((k) => Object.hasOwn(rb, k) && ra[k] === rb[k]);
}

/**
 * Per service, a fingerprint of what a node's routing depends on (the service with its routes,
 * and its port clusters and the {@link referencedClusters} without endpoints) and, separately, of
 * their endpoints: a change of only
 * the second needs EDS alone. With the `previous` mesh's index and fingerprints, a service that
 * is the same object (resolve hands an unchanged one over as the same object) with clusters of
 * the same field values (the same endpoint list) keeps its previous fingerprint, unserialized.
 */
export function serviceFingerprints(
  index: MeshIndex,
  previous?: { index: MeshIndex; fingerprints: Fingerprints },
): Fingerprints {
  const out: Fingerprints = new Map();
  for (const s of index.mesh.services) {
    const names = [...s.ports.flatMap(portOwnedClusters), ...referencedClusters(index, s)];
    const clusters = names.map((n) => index.clusters.get(n));
    const kept = previous?.index.services.get(s.authority) === s &&
        names.every((n, i) => shallowSame(clusters[i], previous.index.clusters.get(n)))
      ? previous.fingerprints.get(s.authority)
      : undefined;
    out.set(
      s.authority,
      kept ?? {
        routing: JSON.stringify([s, clusters.map((c) => c && { ...c, endpoints: undefined })]),
        endpoints: JSON.stringify(clusters.map((c) => c?.endpoints)),
      },
    );
  }
  return out;
}

/** One node's demand: its view (pods, seed dependencies) and what it asked for on demand. */
export interface NodeDemand {
  view: NodeView;
  /**
   * What the node's Envoy asked for on demand: Hosts (`<authority>` or `<authority>:<port>`,
   * from on-demand VHDS) or cluster names (on-demand CDS); each names an authority.
   */
  requested?: readonly string[];
  /**
   * With identity: the same, per caller key (`<namespace>/<serviceAccount>`, from the caller
   * cluster or VHDS name asked for). Given, each caller's clusters are scoped to its own demand
   * (NodeView.callerDependencies).
   */
  requestedBy?: Readonly<Record<string, readonly string[]>>;
}

/**
 * The view a node is translated with: its dependencies replaced by the closed set, and with
 * `requestedBy` each caller's (its pods' callers and every caller that asked) closed over the
 * node's seeds and its own requests, for its namespace's routes.
 */
export function scopedView(index: MeshIndex, demand: NodeDemand): NodeView {
  const authorities = (names: readonly string[] = []) =>
    names.map((n) => requestedAuthority(index, n));
  const seeds = [...demand.view.dependencies, ...authorities(demand.requested)];
  const view: NodeView = {
    ...demand.view,
    dependencies: dependencyClosure(index, seeds, nodeNamespaces(demand.view)),
  };
  const by = demand.requestedBy;
  if (!by) return view;
  const keys = new Set([
    ...demand.view.pods.map((p) => identityCallerKey(p)),
    ...Object.keys(by),
  ]);
  const callerDependencies: Record<string, string[]> = {};
  for (const key of [...keys].sort()) {
    const namespace = key.slice(0, key.indexOf("/"));
    callerDependencies[key] = dependencyClosure(
      index,
      [...demand.view.dependencies, ...authorities(by[key])],
      [namespace],
    );
  }
  return { ...view, callerDependencies };
}
