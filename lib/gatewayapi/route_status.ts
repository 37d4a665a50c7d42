/**
 * Route status: one `status.parents[]` entry per parentRef aether owns — Gateway parents (edge
 * controllerName) then Service parents (mesh controllerName) — each with Accepted and
 * ResolvedRefs at the route's generation. Routes are listed by kind, then `<namespace>/<name>`.
 * @module
 */
import type { ParentOutcome } from "./attachment.ts";
import { ConditionFactory, type Outcome } from "./status/mod.ts";
import type { MeshParentOutcome } from "./mesh/attachment.ts";
import { IdentityMemo } from "../memo/mod.ts";
import { keyOf } from "./object_index.ts";
import type { KubeObject, ParentReference, RouteParentStatus, RouteStatus } from "./types.ts";

/** A route with the parents of one side (edge or mesh) and that side's ResolvedRefs. */
export interface RouteSide {
  kind: string;
  route: KubeObject;
  parents: readonly (ParentOutcome | MeshParentOutcome)[];
  converted: { resolvedRefs: Outcome };
}

/**
 * Statuses by (admitted, read-only) route, with what they were made of: `now`, then per parent
 * its parentRef, controllerName, Accepted and ResolvedRefs outcomes, all compared by identity
 * (attachment and conversion are memoized, so an unchanged route gives the same ones). A route
 * whose parents did not change keeps its status object. Shared between resolves: read-only.
 */
export type StatusMemo = IdentityMemo<KubeObject, { inputs: unknown[]; status: RouteStatus }>;

/** The statuses of every route with a parent we own, in order (kinds in `kinds` order). */
export function routeStatuses(
  kinds: readonly string[],
  sides: { controllerName: string; routes: RouteSide[] }[],
  now: string,
  memo: StatusMemo = new IdentityMemo(),
  key: (o: KubeObject) => string = keyOf,
): { route: KubeObject; status: RouteStatus }[] {
  /** Per kind: each route with its sides, in the order the sides were given. */
  const byKind = new Map<string, Map<KubeObject, { side: RouteSide; controllerName: string }[]>>();
  for (const { controllerName, routes } of sides) {
    for (const side of routes) {
      let routesOfKind = byKind.get(side.kind);
      if (!routesOfKind) byKind.set(side.kind, routesOfKind = new Map());
      const list = routesOfKind.get(side.route);
      if (list) list.push({ side, controllerName });
      else routesOfKind.set(side.route, [{ side, controllerName }]);
    }
  }
  const out: { route: KubeObject; status: RouteStatus }[] = [];
  for (const kind of kinds) {
    const mine = [...(byKind.get(kind) ?? new Map()).entries()]
      .map(([route, list]) => ({ route, list, k: key(route) }))
      .sort((a, b) => (a.k < b.k ? -1 : a.k > b.k ? 1 : 0));
    for (const { route, list } of mine) {
      // A hit (the same parents' outcomes as last time) allocates nothing.
      const seen = memo.peek(route);
      const hit = seen !== undefined && sameInputs(seen.inputs, now, list);
      memo.count(hit);
      if (hit) {
        out.push({ route, status: seen.status });
        continue;
      }
      const inputs: unknown[] = [now];
      const c = new ConditionFactory(route.metadata.generation ?? 0, now);
      const parents: RouteParentStatus[] = [];
      for (const { side, controllerName } of list) {
        for (const p of side.parents) {
          inputs.push(p.parentRef, controllerName, p.accepted, side.converted.resolvedRefs);
          parents.push(parentStatus(c, p.parentRef, controllerName, p.accepted, side));
        }
      }
      const status = { parents };
      memo.set(route, { inputs, status });
      out.push({ route, status });
    }
  }
  return out;
}

/**
 * Whether a status made of `inputs` is this route's now: `now`, then per side and parent its
 * parentRef, controllerName, Accepted and ResolvedRefs, each the same (by identity).
 */
function sameInputs(
  inputs: readonly unknown[],
  now: string,
  list: readonly { side: RouteSide; controllerName: string }[],
): boolean {
  if (inputs[0] !== now) return false;
  let i = 1;
  for (const { side, controllerName } of list) {
    for (const p of side.parents) {
      if (
        inputs[i] !== p.parentRef || inputs[i + 1] !== controllerName ||
        inputs[i + 2] !== p.accepted || inputs[i + 3] !== side.converted.resolvedRefs
      ) return false;
      i += 4;
    }
  }
  return i === inputs.length;
}

function parentStatus(
  c: ConditionFactory,
  parentRef: ParentReference,
  controllerName: string,
  accepted: Outcome,
  side: RouteSide,
): RouteParentStatus {
  return {
    parentRef,
    controllerName,
    conditions: [c.of("Accepted", accepted), c.of("ResolvedRefs", side.converted.resolvedRefs)],
  };
}
