/**
 * HTTPRoutes and GRPCRoutes with intersecting hostnames on one listener: the older route keeps the
 * listener, the other loses that attachment (spec: accept exactly one of the two). Settling (here
 * and in l4/conflicts.ts) derives new outcomes: the ones it is given are remembered (read-only).
 * @module
 */
import type { Attachment, ParentOutcome } from "./attachment.ts";
import type { RouteSpecCommon } from "./types.ts";
import { fail, type Outcome } from "./status/mod.ts";
import type { RouteKind } from "./routes/kind.ts";
import { HostnameIndex } from "./host_index.ts";
import { keyOf, type Obj, sortByAge } from "./object_index.ts";

/** What conflict settling needs of an attached route. */
export interface AttachedRoute {
  readonly kind: RouteKind;
  readonly route: Obj<RouteSpecCommon>;
  readonly parents: readonly ParentOutcome[];
}

interface Winner {
  state: AttachedRoute;
  /** Age order of the winning attachment (the oldest rival is reported). */
  order: number;
}

/**
 * Settles the conflicts of the `competing` routes (default all), one route after the other,
 * oldest first. `settle` gives a parent's attachments after settling (the same array when none
 * changed) and its outcome. The result is `routes` in their order: a route with a changed parent
 * is a new value with new parents (a changed parent a new outcome); the others, and `routes`
 * itself when none changed, are as they were. Nothing given is changed.
 */
export function settleByAge<R extends AttachedRoute>(
  routes: readonly R[],
  settle: (
    state: R,
    parent: ParentOutcome,
  ) => { readonly attachments: readonly Attachment[]; readonly accepted: Outcome },
  competing: readonly R[] = routes,
): readonly R[] {
  const settled = new Map<R, readonly ParentOutcome[]>();
  for (const state of sortByAge(competing, (s) => s.route)) {
    let changed = false;
    const parents = state.parents.map((parent) => {
      const { attachments, accepted } = settle(state, parent);
      if (attachments === parent.attachments && accepted === parent.accepted) return parent;
      changed = true;
      return { parentRef: parent.parentRef, accepted, attachments };
    });
    if (changed) settled.set(state, parents);
  }
  if (settled.size === 0) return routes;
  return routes.map((r) => {
    const parents = settled.get(r);
    return parents ? { ...r, parents } : r;
  });
}

/**
 * Drops the attachments that lose to an older route of another kind, refusing their parent: the
 * routes with settled parents, as new values (settleByAge).
 */
export function settleKindConflicts<R extends AttachedRoute>(routes: readonly R[]): readonly R[] {
  // Only routes of different kinds conflict: with one kind there is nothing to settle (nor sort).
  if (routes.every((s) => s.kind === routes[0].kind)) return routes;
  /** Per listener id, per route kind: the hostnames of accepted attachments so far. */
  const winners = new Map<string, Map<RouteKind, HostnameIndex<Winner>>>();
  let order = 0;
  return settleByAge(routes, (state, parent) => {
    let accepted = parent.accepted;
    const attachments = parent.attachments.filter((a) => {
      const held = winners.get(a.listenerId) ?? new Map<RouteKind, HostnameIndex<Winner>>();
      winners.set(a.listenerId, held);
      let rival: Winner | undefined;
      for (const [kind, index] of held) {
        if (kind === state.kind) continue;
        for (const h of a.hostnames) {
          const hit = index.firstIntersecting(h)?.item;
          if (hit && (!rival || hit.order < rival.order)) rival = hit;
        }
      }
      if (rival) {
        accepted = fail(
          "NotAllowedByListeners",
          `listener ${a.listenerId} already serves these hostnames with the older ${rival.state.kind} ${
            keyOf(rival.state.route)
          }`,
        );
        return false;
      }
      if (accepted.ok) {
        let index = held.get(state.kind);
        if (!index) held.set(state.kind, index = new HostnameIndex<Winner>());
        const w: Winner = { state, order: order++ };
        for (const h of a.hostnames) index.add(h, w);
      }
      return true;
    });
    const kept = attachments.length === parent.attachments.length;
    return { attachments: kept ? parent.attachments : attachments, accepted };
  });
}
