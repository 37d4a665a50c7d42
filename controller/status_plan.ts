/**
 * What status each object should carry, from resolve's computed statuses and the object as the
 * API server holds it. Pure: conditions merged so lastTransitionTime moves only on a status
 * change; on routes, only our `parents[]` entries are ours to set (other controllers' are kept),
 * and a route we no longer attach to loses our entries. Routes are the objects of the registry's
 * route kinds (`ROUTE_KINDS`, or the kinds a caller passes).
 * @module
 */
import {
  mergeStatus,
  type ObjectStatus,
  ROUTE_KINDS,
  withOtherParents,
} from "../lib/gatewayapi/mod.ts";
import { equalData } from "../lib/data/mod.ts";
import type { StatusTarget } from "../lib/kube/mod.ts";
import { objectKey, type SourceObject } from "../lib/source/mod.ts";

/** The status one object should have, and what it has now. */
export interface StatusUpdate {
  key: string;
  target: StatusTarget;
  status: unknown;
  live: unknown;
}

type Parent = { controllerName?: string };

/**
 * What {@link planStatus} planned last, by source object (kept while the object is): the resolved
 * status it was planned with. An object and a status both unchanged (the same objects: sources
 * and resolve hand unchanged ones over as they were) are not planned again, so a revision costs
 * what changed, not every object's merge. Whoever offers the plans owns it and drops it when
 * every plan must be made again (a new leader term).
 */
export type PlannedStatuses = WeakMap<SourceObject, unknown>;

/**
 * The status updates for `statuses` (resolve's output) over `objects` (the source revision, with
 * their current status). `isOurs` tells our controllerNames; `now` stamps changed conditions;
 * `routeKinds` are the kinds whose `parents[]` entries we share with other controllers. Every
 * returned update may still equal its live status (the writer compares). With `planned`, objects
 * whose plan stands are left out.
 */
export function planStatus(
  objects: readonly SourceObject[],
  statuses: readonly ObjectStatus[],
  now: string,
  isOurs: (controllerName: string) => boolean,
  routeKinds: readonly { readonly kind: string }[] = ROUTE_KINDS,
  planned?: PlannedStatuses,
): StatusUpdate[] {
  const routes = new Set(routeKinds.map((k) => k.kind));
  const live = new Map(objects.map((o) => [objectKey(o), o]));
  const out: StatusUpdate[] = [];
  const covered = new Set<string>();
  const push = (o: SourceObject, status: unknown) => {
    const key = objectKey(o);
    covered.add(key);
    out.push({
      key,
      target: {
        kind: o.kind,
        apiVersion: o.apiVersion,
        namespace: o.metadata.namespace,
        name: o.metadata.name,
        resourceVersion: String(o.metadata.resourceVersion ?? ""),
      },
      status,
      live: o.status,
    });
  };
  for (const s of statuses) {
    const o = live.get(
      objectKey({ kind: s.kind, metadata: { namespace: s.namespace, name: s.name } }),
    );
    if (!o) continue;
    if (planned) {
      // The very object with the status planned last time (the same, or made again equal:
      // resolve remakes a route's status when its Gateway changed): that plan stands.
      const before = planned.get(o);
      if (before === s.status || (before !== undefined && equalData(before, s.status))) {
        covered.add(objectKey(o));
        continue;
      }
      planned.set(o, s.status);
    }
    const merged = mergeStatus(o.status, s.status, now);
    push(o, routes.has(o.kind) ? withOtherParents(o.status, merged, isOurs) : merged);
  }
  // Routes that still carry an entry of ours that resolve no longer gives: drop ours.
  for (const o of objects) {
    if (!routes.has(o.kind) || covered.has(objectKey(o))) continue;
    const parents = ((o.status as { parents?: Parent[] } | undefined)?.parents) ?? [];
    if (!parents.some((p) => isOurs(p.controllerName ?? ""))) continue;
    push(o, withOtherParents(o.status, { parents: [] }, isOurs));
  }
  return out;
}
