/**
 * The endpoints path of resolve: a revision that changes only ClusterSetEndpoints objects (the
 * registry's endpoints of imported services, each in place: same kind, apiVersion, namespace and
 * name; every other object the same object at the same position, the same options) is resolved
 * on the last result (state/last.ts) — the clusters whose endpoints those objects make get their
 * endpoints made again, and so do the merged UDP clusters built from them (edge and mesh);
 * everything else is the last result's own objects. ClusterSetEndpoints feed nothing but
 * endpoints (lib/gatewayapi/backends.ts: ServiceImport clusters, clusterset VIP Service
 * clusters, wherever they are used — edge, mesh, namespaced), so listeners, routes, statuses and
 * problems hold; an object that does not admit cleanly, before or after, or that some problem is
 * about (a duplicate), sends the revision cold. The result deep-equals a resolve of the same
 * objects with a new state (endpoints_edit_test.ts). Pure: the state is passed in and out.
 * @module
 */
import { admitted } from "./edit_common.ts";
import { CLUSTER_SET_ENDPOINTS_KIND, type ClusterSetEndpointsSpec } from "./core_types.ts";
import { memoizedImportEndpoints } from "./imports_memo.ts";
import { mergedUdpCluster, udpClusterName } from "./l4/udp_clusters.ts";
import { IdentityMemo } from "../memo/mod.ts";
import type { ResolveState } from "./state/mod.ts";
import type { ResolveResult } from "./resolve_types.ts";
import type { KubeObject } from "./types.ts";
import type { IRCluster, IREndpoint, MeshIR } from "../ir/mod.ts";
import { mergedUdpClusterOf, portUdpRoutes } from "../ir/mod.ts";

/** Every changed position holds a ClusterSetEndpoints object, before and after. */
export function isEndpointsChange(
  objects: readonly KubeObject[],
  before: readonly KubeObject[],
  changed: readonly number[],
): boolean {
  return changed.every((i) =>
    objects[i]?.kind === CLUSTER_SET_ENDPOINTS_KIND && before[i].kind === CLUSTER_SET_ENDPOINTS_KIND
  );
}

/** The new specs of the changed ClusterSetEndpoints objects by `<ns>/<name>`, or undefined. */
function changedSpecs(
  objects: readonly KubeObject[],
  state: ResolveState,
  changed: readonly number[],
): Map<string, ClusterSetEndpointsSpec | undefined> | undefined {
  const last = state.last.value!;
  const specs = new Map<string, ClusterSetEndpointsSpec | undefined>();
  for (const i of changed) {
    const raw = objects[i], old = last.objects[i];
    if (typeof raw !== "object" || raw === null || typeof raw.metadata !== "object") return;
    const a = old.metadata, b = raw.metadata;
    if (raw.apiVersion !== old.apiVersion || a.name !== b.name || a.namespace !== b.namespace) {
      return undefined;
    }
    const key = `${b.namespace ?? ""}/${b.name}`;
    if (specs.has(key) || !admitted(old, state)) return undefined;
    const after = admitted(raw, state) as KubeObject & { spec?: ClusterSetEndpointsSpec };
    if (!after) return undefined;
    specs.set(key, after.spec);
  }
  // A problem about one (a duplicate: the first one is used) could move with the change.
  for (const p of last.result.problems) {
    if (p.kind === CLUSTER_SET_ENDPOINTS_KIND && specs.has(`${p.namespace ?? ""}/${p.name}`)) {
      return undefined;
    }
  }
  return specs;
}

/**
 * The result of a revision changing only ClusterSetEndpoints objects at `changed`, made on the
 * last result (and remembered); undefined when it does not qualify (see the module doc).
 */
export function endpointsOnLast(
  objects: readonly KubeObject[],
  state: ResolveState,
  changed: readonly number[],
): ResolveResult | undefined {
  const last = state.last.value!;
  const specs = changedSpecs(objects, state, changed);
  if (!specs) return undefined;
  // The new endpoints of every cluster made of a changed object, by cluster name.
  const memo = state.backends.imports ??= new IdentityMemo();
  const fresh = new Map<string, IREndpoint[]>();
  const imports = new Set<string>();
  for (const [name, source] of last.backends.importSources()) {
    if (source.use === "import") imports.add(name);
    if (!specs.has(source.key)) continue;
    const spec = specs.get(source.key);
    fresh.set(name, memoizedImportEndpoints(memo, source.use, spec, source.port));
  }
  // Clusters are shared between the edge and the mesh: one new object for each old one.
  const made = new Map<IRCluster, IRCluster>();
  const swap = (c: IRCluster): IRCluster => {
    const endpoints = fresh.get(c.name);
    if (!endpoints || endpoints === c.endpoints) return c;
    let next = made.get(c);
    if (!next) made.set(c, next = { ...c, endpoints });
    return next;
  };
  const { ir, mesh } = last.result;
  const edge = ir.clusters.map(swap);
  edgeMerged(last.result.ir.listeners, edge, fresh);
  const result: ResolveResult = {
    ir: { ...ir, clusters: edge },
    mesh: newMesh(mesh, swap, fresh, imports),
    statuses: last.result.statuses.slice(),
    problems: last.result.problems.slice(),
  };
  last.objects = objects.slice();
  last.result = result;
  return result;
}

/** Makes again, in `clusters`, the edge's merged UDP clusters with a backend in `fresh`. */
function edgeMerged(
  listeners: ResolveResult["ir"]["listeners"],
  clusters: IRCluster[],
  fresh: ReadonlyMap<string, unknown>,
): void {
  let byName: Map<string, IRCluster> | undefined;
  for (const l of listeners) {
    for (const chain of l.filterChains) {
      if (chain.kind !== "udpProxy") continue;
      const name = udpClusterName(chain.name);
      if (chain.cluster !== name || !chain.backends.some((b) => fresh.has(b.cluster))) continue;
      byName ??= new Map(clusters.map((c) => [c.name, c]));
      const merged = mergedUdpCluster(name, chain.name, l.port, chain.backends, byName);
      const at = clusters.findIndex((c) => c.name === name);
      if (merged && at >= 0) clusters[at] = merged;
    }
  }
}

/**
 * The mesh with its clusters swapped and its merged UDP clusters with a backend in `fresh` made
 * again (from the Service clusters, as buildMesh makes them: not the import clusters).
 */
function newMesh(
  mesh: MeshIR,
  swap: (c: IRCluster) => IRCluster,
  fresh: ReadonlyMap<string, unknown>,
  imports: ReadonlySet<string>,
): MeshIR {
  const clusters = mesh.clusters.map(swap);
  let byName: Map<string, IRCluster> | undefined;
  for (const s of mesh.services) {
    for (const p of s.ports) {
      for (const r of portUdpRoutes(p)) {
        const name = mergedUdpClusterOf(r);
        if (!name || !r.backends.some((b) => fresh.has(b.cluster))) continue;
        byName ??= new Map(
          clusters.filter((c) => !imports.has(c.name) && !c.name.startsWith(udpClusterName("")))
            .map((c) => [c.name, c]),
        );
        const merged = mergedUdpCluster(name, r.name, p.port, r.backends, byName);
        const at = clusters.findIndex((c) => c.name === name);
        if (merged && at >= 0) clusters[at] = merged;
      }
    }
  }
  const out: MeshIR = { ...mesh, clusters };
  if (mesh.namespacedClusters) out.namespacedClusters = mesh.namespacedClusters.map(swap);
  return out;
}
