/**
 * resolve(): Gateway API objects → aether IR plus status as data. Pure and deterministic: no I/O,
 * no clock (condition times come from `options.now`). Objects failing CRD validation are dropped
 * and reported; everything else keeps being resolved.
 * @module
 */
import { admit } from "./admit.ts";
import { attachContext, attachMemoized } from "./attach_memo.ts";
import { attachRoute, type ParentOutcome, type RouteSpecCommon } from "./attachment.ts";
import { Backends } from "./backends.ts";
import { conversionContext, convertMemoized } from "./convert_memo.ts";
import { buildListeners, type Placement } from "./build_ir.ts";
import { evaluateGateways, gatewayClassStatus, gatewayStatus, type RouteKind } from "./gateways.ts";
import { convertGRPCRoute } from "./grpc_route.ts";
import { convertHTTPRoute } from "./http_route.ts";
import { settleKindConflicts } from "./kind_conflicts.ts";
import { attachMeshRoute, MESH_CONTROLLER_NAME, type MeshServices } from "./mesh_attachment.ts";
import { buildMesh, type MeshRouteState } from "./mesh_build.ts";
import { routeStatuses } from "./route_status.ts";
import type { ConvertedRoute } from "./rule_common.ts";
import { buildSnapshot, keyOf, type Obj } from "./snapshot.ts";
import type { KubeObject, Problem } from "./types.ts";
import type { IR, IRSecret } from "../ir/types.ts";
import type { MeshIR } from "../ir/mesh.ts";

/** Options of resolve(). */
export interface ResolveOptions {
  /** GatewayClass controllerName aether claims; default "gateway.aether.io/edge". */
  controllerName?: string;
  /** Address every Gateway listener binds; default "127.0.0.1". */
  bindAddress?: string;
  /** Mesh domain of cluster names; default "aether.internal". */
  meshDomain?: string;
  /** lastTransitionTime of every condition; default "1970-01-01T00:00:00Z". */
  now?: string;
  /** controllerName of status entries for Service parents (GAMMA); default MESH_CONTROLLER_NAME. */
  meshControllerName?: string;
}

/** The computed status of one object, in exactly the Gateway API status shape. */
export interface ObjectStatus {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  status: unknown;
}

/** What resolve() returns. */
export interface ResolveResult {
  ir: IR;
  /** East-west (GAMMA): every mesh Service with its producer and consumer routes per port. */
  mesh: MeshIR;
  statuses: ObjectStatus[];
  problems: Problem[];
}

interface RouteState {
  kind: RouteKind;
  route: Obj<RouteSpecCommon>;
  parents: ParentOutcome[];
  converted: ConvertedRoute;
}

const statusOf = (o: KubeObject, status: unknown): ObjectStatus => ({
  apiVersion: o.apiVersion,
  kind: o.kind,
  ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
  name: o.metadata.name,
  status,
});

/** Resolves Gateway API objects into aether's IR and the status of every object we own. */
export function resolve(objects: KubeObject[], options: ResolveOptions = {}): ResolveResult {
  const controllerName = options.controllerName ?? "gateway.aether.io/edge";
  const bindAddress = options.bindAddress ?? "127.0.0.1";
  const meshDomain = options.meshDomain ?? "aether.internal";
  const now = options.now ?? "1970-01-01T00:00:00Z";
  const problems: Problem[] = [];
  const built = buildSnapshot(admit(objects, problems));
  problems.push(...built.problems);
  const snapshot = built.snapshot;

  const secretMap = new Map<string, IRSecret>();
  const { classes, gateways } = evaluateGateways(snapshot, controllerName, secretMap);
  const gatewayMap = new Map(gateways.map((g) => [keyOf(g.gateway), g]));
  const backends = new Backends(snapshot, meshDomain, problems);

  const routes: RouteState[] = [];
  const meshRoutes: MeshRouteState[] = [];
  const meshIndex: MeshServices = {
    services: snapshot.services,
    owners: backends.owners,
    meshDomain,
  };
  const kinds: [RouteKind, Obj<RouteSpecCommon>[], (r: never, mesh?: boolean) => ConvertedRoute][] =
    [
      ["HTTPRoute", snapshot.httpRoutes, (r, mesh) => convertHTTPRoute(backends, r, mesh)],
      ["GRPCRoute", snapshot.grpcRoutes, (r, mesh) => convertGRPCRoute(backends, r, mesh)],
    ];
  const context = conversionContext(snapshot, meshDomain);
  const attached = attachContext(gateways, snapshot.namespaces);
  for (const [kind, list, convert] of kinds) {
    for (const route of list) {
      const parents = attachMemoized(
        attached,
        kind,
        route,
        () => attachRoute(snapshot, gatewayMap, kind, route),
      );
      if (parents.length > 0) {
        const converted = convertMemoized(
          backends,
          context,
          route,
          false,
          () => convert(route as never),
        );
        routes.push({ kind, route, parents, converted });
      }
      const meshParents = attachMeshRoute(meshIndex, route);
      if (meshParents.length === 0) continue;
      const converted = convertMemoized(
        backends,
        context,
        route,
        true,
        () => convert(route as never, true),
      );
      for (const parent of meshParents) {
        if (parent.accepted.ok && converted.unsupported) parent.accepted = converted.unsupported;
      }
      meshRoutes.push({ kind, route, parents: meshParents, converted });
    }
  }
  settleKindConflicts(routes);

  // One placement per route and listener (a route attached twice to a listener counts once);
  // every placement of a route is made in its own iteration, so the dedup is per route.
  const placements: Placement[] = [];
  for (const state of routes) {
    const mine = new Map<string, Placement>();
    for (const parent of state.parents) {
      if (parent.accepted.ok && state.converted.unsupported) {
        parent.accepted = state.converted.unsupported;
      }
      if (!parent.accepted.ok) continue;
      for (const a of parent.attachments) {
        const seen = mine.get(a.listener.id);
        if (seen) {
          seen.hostnames = [...new Set([...seen.hostnames, ...a.hostnames])];
          continue;
        }
        const p: Placement = {
          route: state.route,
          converted: state.converted,
          listener: a.listener,
          hostnames: a.hostnames,
        };
        mine.set(a.listener.id, p);
        placements.push(p);
      }
    }
  }
  for (const p of placements) p.listener.attachedRoutes++;

  const allListeners = gateways.flatMap((g) => g.listeners);
  const listeners = buildListeners(allListeners, placements, bindAddress);
  const used = new Set<string>();
  for (const l of listeners) {
    for (const chain of l.filterChains) {
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
  const ir: IR = {
    listeners,
    clusters: backends.clusters().filter((c) => used.has(c.name)),
    secrets: [...secretMap.values()].filter((s) => programmedSecrets.has(s.name)).sort((
      a,
      b,
    ) => (a.name < b.name ? -1 : 1)),
  };

  const mesh = buildMesh(meshIndex, backends, meshRoutes);
  const statuses: ObjectStatus[] = [];
  for (const name of classes) {
    const gc = snapshot.gatewayClasses.get(name)!;
    statuses.push(statusOf(gc, gatewayClassStatus(gc.metadata.generation ?? 0, now)));
  }
  const byKey = (a: { k: string }, b: { k: string }) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0);
  for (const { g } of gateways.map((g) => ({ g, k: keyOf(g.gateway) })).sort(byKey)) {
    statuses.push(statusOf(g.gateway, gatewayStatus(g, bindAddress, now)));
  }
  const sides = [
    { controllerName, routes },
    { controllerName: options.meshControllerName ?? MESH_CONTROLLER_NAME, routes: meshRoutes },
  ];
  for (const { route, status } of routeStatuses(["HTTPRoute", "GRPCRoute"], sides, now)) {
    statuses.push(statusOf(route, status));
  }
  return { ir, mesh, statuses, problems };
}
