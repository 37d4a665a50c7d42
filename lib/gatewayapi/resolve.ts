/**
 * resolve(): Gateway API objects → aether IR plus status as data. Pure and deterministic: no I/O,
 * no clock (condition times come from `options.now`). Objects failing CRD validation are dropped
 * and reported; everything else keeps being resolved.
 * @module
 */
import { admit } from "./admission/mod.ts";
import { attachRoute, type ParentOutcome, refusedWhenUnsupported } from "./attachment.ts";
import { Backends } from "./backends.ts";
import { LOOPBACK_ADDRESSES } from "./addresses.ts";
import { buildListeners } from "./build_ir.ts";
import type { Placement } from "./placement.ts";
import {
  evaluateGateways,
  gatewayClassStatus,
  gatewayStatus,
  supportedFeatures,
} from "./gateways.ts";
import { settleKindConflicts } from "./kind_conflicts.ts";
import { settleL4Conflicts } from "./l4/conflicts.ts";
import {
  attachMeshRoute,
  isMeshParent,
  MESH_CONTROLLER_NAME,
  type MeshServices,
} from "./mesh/attachment.ts";
import { buildMesh, type MeshRouteState } from "./mesh/build.ts";
import { xmeshStatus } from "./mesh/xmesh.ts";
import { settleMeshL4Conflicts } from "./mesh/l4_conflicts.ts";
import { ROUTE_KINDS } from "./routes/registry.ts";
import { admissionFor } from "./read_kinds.ts";
import type { ConvertedRoute, RouteKind } from "./routes/kind.ts";
import { routeStatuses } from "./route_status.ts";
import { mergeUdpBackends } from "./l4/udp_clusters.ts";
import { indexObjects, keyOf, type Obj } from "./object_index.ts";
import { Reads, readsHold } from "./reads.ts";
import { ResolveState, type RouteConverter, type VhostSite } from "./state/mod.ts";
import type { ObjectStatus, ResolveOptions, ResolveResult } from "./resolve_types.ts";
import type { KubeObject, Problem, RouteSpecCommon } from "./types.ts";
export type { ObjectStatus, ResolveOptions, ResolveResult } from "./resolve_types.ts";
import type { IR, IRSecret } from "../ir/mod.ts";

interface RouteState {
  readonly kind: RouteKind;
  readonly route: Obj<RouteSpecCommon>;
  /** Remembered (read-only) outcomes; once settled, this resolve's own. */
  readonly parents: readonly ParentOutcome[];
  readonly converted: ConvertedRoute;
}

/** The status entry of object `o` (two literals, not a spread: one is made per route and revision). */
export const statusOf = (o: KubeObject, status: unknown): ObjectStatus => {
  const { namespace, name } = o.metadata;
  return namespace
    ? { apiVersion: o.apiVersion, kind: o.kind, namespace, name, status }
    : { apiVersion: o.apiVersion, kind: o.kind, name, status };
};

/**
 * Resolves Gateway API objects into aether's IR and the status of every object we own. `state`
 * holds the memos of one input stream: pass the same one to every resolve of that stream (an
 * edit then recomputes only what it touched); without one, the resolve is cold. The result may
 * share objects with earlier results of the same state: treat it as read-only. Throws
 * CelNotLoaded when an object reaches a CRD rule that runs on the CEL library before the state's
 * `cel` has loaded (the engine, lib/engine, loads it and resolves again).
 */
export function resolve(
  objects: KubeObject[],
  options: ResolveOptions = {},
  state: ResolveState = new ResolveState(),
): ResolveResult {
  const controllerName = options.controllerName ?? "gateway.aether.io/edge";
  const bindAddress = options.bindAddress ?? "127.0.0.1";
  const meshDomain = options.meshDomain ?? "aether.internal";
  const now = options.now ?? "1970-01-01T00:00:00Z";
  const routeKinds = options.routeKinds ?? ROUTE_KINDS;
  const problems: Problem[] = [];
  const admission = admissionFor(routeKinds, options.catalogue);
  const built = indexObjects(
    admit(
      objects,
      problems,
      admission,
      options.admitted === true,
      state.admitted,
      state.cel,
    ),
    routeKinds.map((k) => k.kind),
    state.order,
  );
  problems.push(...built.problems);
  const indexed = built.indexed;

  const secretMap = new Map<string, IRSecret>();
  const addressing = {
    bindAddress,
    usable: options.usableAddresses ?? [bindAddress, ...LOOPBACK_ADDRESSES],
    ownProxies: options.gatewayOwnProxies === true,
  };
  const { classes, gateways } = evaluateGateways(
    indexed,
    controllerName,
    secretMap,
    routeKinds,
    addressing,
  );
  const gatewayMap = new Map(gateways.map((g) => [keyOf(g.gateway), g]));
  const backends = new Backends(indexed, meshDomain, problems, state.backends);

  const routes: RouteState[] = [];
  const meshRoutes: MeshRouteState[] = [];
  const meshIndex: MeshServices = {
    services: indexed.services,
    imports: indexed.serviceImports,
    owners: backends.owners,
    meshDomain,
  };
  const context = state.convert.context(indexed, meshDomain, backends.owners);
  const attached = state.attach.context(gateways, indexed.namespaces);
  for (const def of routeKinds) {
    const kind = def.kind;
    // Made once per kind (a memo hit allocates nothing per route).
    const convert: RouteConverter = (r, mesh, reads) =>
      backends.reading(reads, () => def.convert(backends, r as Obj<never>, mesh));
    const attach = (r: Obj<RouteSpecCommon>) => attachRoute(indexed, gatewayMap, kind, r);
    for (const route of indexed.routes.get(kind) ?? []) {
      const parents = state.attach.attach(attached, kind, route, attach);
      if (parents.length > 0) {
        const converted = state.convert.convert(context, route, false, convert);
        backends.apply(converted);
        routes.push({ kind, route, parents, converted });
      }
      // Every kind serves Service parents too: UDPRoute on UDP ports, the others on TCP ones.
      if (!route.spec.parentRefs?.some(isMeshParent)) continue;
      // Remembered outcomes are shared and read-only: a refused one is a new outcome.
      const meshParents = state.meshAttach.get(
        route,
        () => {
          const reads = new Reads();
          const transport = def.chain === "udpProxy" ? "UDP" : "TCP";
          const parents = attachMeshRoute(meshIndex, route, reads, transport);
          return { context, reads, parents };
        },
        (hit) => readsHold(hit.reads, hit.context, context),
      ).parents;
      if (meshParents.length === 0) continue;
      const converted = state.convert.convert(context, route, true, convert);
      backends.apply(converted);
      meshRoutes.push({
        kind,
        http2: def.http2Backends,
        route,
        parents: refusedWhenUnsupported(meshParents, converted.unsupported),
        converted,
      });
    }
  }
  // A Service port forwards a caller's connections to one TCPRoute (its datagrams to one
  // UDPRoute), an SNI name to one TLSRoute: the oldest keeps it.
  const meshSettled = settleMeshL4Conflicts(meshRoutes);
  const allListeners = gateways.flatMap((g) => g.listeners);
  const listenerById = new Map(allListeners.map((l) => [l.id, l]));
  // Conflicts settled, then unsupported routes refused: new outcomes, the remembered ones intact.
  const settled = settleL4Conflicts(
    settleKindConflicts(routes),
    listenerById,
    options.gatewayOwnProxies === true,
  ).map((r) => {
    const parents = refusedWhenUnsupported(r.parents, r.converted.unsupported);
    return parents === r.parents ? r : { ...r, parents };
  });

  // One placement per route and listener (a route attached twice to a listener counts once);
  // every placement of a route is made in its own iteration, so the dedup is per route.
  const placements: Placement[] = [];
  for (const r of settled) {
    const first = placements.length; // this route's placements are placements[first..]
    for (const parent of r.parents) {
      if (!parent.accepted.ok) continue;
      for (const a of parent.attachments) {
        const listener = listenerById.get(a.listenerId)!;
        let seen: Placement | undefined;
        for (let i = first; i < placements.length && !seen; i++) {
          if (placements[i].listener === listener) seen = placements[i];
        }
        if (seen) {
          seen.hostnames = [...new Set([...seen.hostnames, ...a.hostnames])];
          continue;
        }
        placements.push({
          route: r.route,
          converted: r.converted,
          listener,
          hostnames: a.hostnames,
        });
      }
    }
  }
  for (const p of placements) p.listener.attachedRoutes++;

  const sites: VhostSite[] = [];
  const listeners = buildListeners(allListeners, placements, bindAddress, state.vhosts, sites);
  const used = new Set<string>();
  for (const l of listeners) {
    for (const chain of l.filterChains) {
      if (chain.kind !== "http") {
        for (const b of chain.backends) used.add(b.cluster);
        continue;
      }
      for (const vh of chain.virtualHosts) {
        for (const r of vh.routes) {
          if (r.action.kind !== "forward") continue;
          for (const b of r.action.backends) used.add(b.cluster);
          for (const m of r.action.mirrors) used.add(m.cluster);
        }
      }
    }
  }
  const programmedSecrets = new Set(
    allListeners.filter((l) => l.programmed).flatMap((l) => l.certificateSecrets),
  );
  const clusters = backends.clusters().filter((c) => used.has(c.name));
  const ir: IR = {
    listeners,
    clusters: [...clusters, ...mergeUdpBackends(listeners, clusters)].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    ),
    secrets: [...secretMap.values()].filter((s) => programmedSecrets.has(s.name)).sort((
      a,
      b,
    ) => (a.name < b.name ? -1 : 1)),
  };

  const mesh = options.mesh === false
    ? { services: [], clusters: [] }
    : buildMesh(meshIndex, backends, meshSettled, state.mesh);
  const statuses: ObjectStatus[] = [];
  const features = supportedFeatures(routeKinds)
    .filter((f) => !options.withoutFeatures?.includes(f));
  for (const name of classes) {
    const gc = indexed.gatewayClasses.get(name)!;
    statuses.push(statusOf(gc, gatewayClassStatus(gc.metadata.generation ?? 0, now, features)));
  }
  const meshControllerName = options.meshControllerName ?? MESH_CONTROLLER_NAME;
  for (const m of indexed.meshes.values()) {
    if (m.spec?.controllerName !== meshControllerName) continue;
    const status = xmeshStatus(m.metadata.generation ?? 0, now, options.meshFeatures ?? []);
    statuses.push(statusOf(m, status));
  }
  const byKey = (a: { k: string }, b: { k: string }) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0);
  for (const { g } of gateways.map((g) => ({ g, k: keyOf(g.gateway) })).sort(byKey)) {
    statuses.push(statusOf(g.gateway, gatewayStatus(g, now)));
  }
  const sides = [
    { controllerName, routes: settled },
    { controllerName: meshControllerName, routes: meshSettled },
  ];
  const kindNames = routeKinds.map((k) => k.kind);
  for (
    const { route, status } of routeStatuses(kindNames, sides, now, state.statuses, indexed.keyOf)
  ) {
    statuses.push(statusOf(route, status));
  }
  const result = { ir, mesh, statuses, problems };
  state.last.set({
    objects: objects.slice(),
    options,
    result,
    admission,
    backends,
    context,
    indexed,
    gateways,
    attached,
    controllerName,
    now,
    routes: [...settled],
    sites,
  });
  return result;
}
