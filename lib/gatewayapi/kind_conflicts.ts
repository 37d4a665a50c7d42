/**
 * HTTPRoutes and GRPCRoutes with intersecting hostnames on one listener: the older route keeps the
 * listener, the other loses that attachment (spec: accept exactly one of the two).
 * @module
 */
import type { ParentOutcome } from "./attachment.ts";
import type { RouteSpecCommon } from "./types.ts";
import { fail } from "./status/mod.ts";
import type { RouteKind } from "./routes/kind.ts";
import { HostnameIndex } from "./host_index.ts";
import { keyOf, type Obj, sortByAge } from "./object_index.ts";

/** What conflict settling needs of an attached route. */
export interface AttachedRoute {
  kind: RouteKind;
  route: Obj<RouteSpecCommon>;
  parents: ParentOutcome[];
}

interface Winner {
  state: AttachedRoute;
  /** Age order of the winning attachment (the oldest rival is reported). */
  order: number;
}

/** Drops the attachments that lose to an older route of another kind, updating `accepted`. */
export function settleKindConflicts(routes: AttachedRoute[]) {
  // Only routes of different kinds conflict: with one kind there is nothing to settle (nor sort).
  if (routes.every((s) => s.kind === routes[0].kind)) return;
  /** Per listener id, per route kind: the hostnames of accepted attachments so far. */
  const winners = new Map<string, Map<RouteKind, HostnameIndex<Winner>>>();
  let order = 0;
  for (const state of sortByAge(routes, (s) => s.route)) {
    for (const parent of state.parents) {
      parent.attachments = parent.attachments.filter((a) => {
        const held = winners.get(a.listener.id) ?? new Map<RouteKind, HostnameIndex<Winner>>();
        winners.set(a.listener.id, held);
        let rival: Winner | undefined;
        for (const [kind, index] of held) {
          if (kind === state.kind) continue;
          for (const h of a.hostnames) {
            const hit = index.firstIntersecting(h)?.item;
            if (hit && (!rival || hit.order < rival.order)) rival = hit;
          }
        }
        if (rival) {
          parent.accepted = fail(
            "NotAllowedByListeners",
            `listener ${a.listener.id} already serves these hostnames with the older ${rival.state.kind} ${
              keyOf(rival.state.route)
            }`,
          );
          return false;
        }
        if (parent.accepted.ok) {
          let index = held.get(state.kind);
          if (!index) held.set(state.kind, index = new HostnameIndex<Winner>());
          const w: Winner = { state, order: order++ };
          for (const h of a.hostnames) index.add(h, w);
        }
        return true;
      });
    }
  }
}
