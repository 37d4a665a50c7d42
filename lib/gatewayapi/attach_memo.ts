/**
 * Route attachment, memoized: a route attaches the same way as long as it is the same (admitted)
 * object and what attachment reads is the same — our Gateways (the same objects in the same
 * order) and the labels of every Namespace. A hit rebuilds the outcomes onto this resolve's
 * listeners (by listener id), so later steps may still change them; only a route an edit replaced
 * is attached again. Remembered parentRefs, outcomes and hostnames are shared: read-only.
 * @module
 */
import type { Attachment, ParentOutcome, RouteSpecCommon } from "./attachment.ts";
import type { Outcome } from "./conditions.ts";
import type { GatewayState, ListenerState } from "./gateways.ts";
import type { RouteKind } from "./route_kinds.ts";
import type { Obj } from "./snapshot.ts";
import type { KubeObject, ParentReference } from "./types.ts";

/** What attachment reads besides the route; equal identities mean equal attachments. */
export interface AttachContext {
  gateways: readonly KubeObject[];
  namespaces: ReadonlyMap<string, Record<string, string>>;
  /** This resolve's listeners by id (not part of the comparison). */
  listeners: Map<string, ListenerState>;
}

interface Remembered {
  parentRef: ParentReference;
  accepted: Outcome;
  attachments: { id: string; hostnames: string[] }[];
}

interface Entry {
  context: AttachContext;
  kind: RouteKind;
  parents: Remembered[];
}

const memo = new WeakMap<KubeObject, Entry>();

/** The context of the last resolve; a resolve over the same Gateways and labels gets it again. */
let last: AttachContext | undefined;

const sameItems = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

function sameLabels(
  a: ReadonlyMap<string, Record<string, string>>,
  b: ReadonlyMap<string, Record<string, string>>,
): boolean {
  if (a.size !== b.size) return false;
  for (const [name, labels] of a) {
    const other = b.get(name);
    if (!other) return false;
    const keys = Object.keys(labels);
    if (keys.length !== Object.keys(other).length) return false;
    if (keys.some((k) => labels[k] !== other[k])) return false;
  }
  return true;
}

/**
 * The attachment context of one resolve: the previous resolve's (with this resolve's listeners)
 * when the Gateways and Namespace labels are the same, else a new one.
 */
export function attachContext(
  gateways: readonly GatewayState[],
  namespaces: ReadonlyMap<string, Record<string, string>>,
): AttachContext {
  const listeners = new Map<string, ListenerState>();
  let unique = true;
  for (const g of gateways) {
    for (const l of g.listeners) {
      if (listeners.has(l.id)) unique = false;
      listeners.set(l.id, l);
    }
  }
  const objects = gateways.map((g) => g.gateway);
  // Listener ids name listeners again only when unique; otherwise remember nothing.
  if (!unique) return { gateways: objects, namespaces, listeners };
  if (last && sameItems(last.gateways, objects) && sameLabels(last.namespaces, namespaces)) {
    last.listeners = listeners;
    return last;
  }
  return last = { gateways: objects, namespaces, listeners };
}

/** `attach()` of `route`, or its remembered outcomes rebuilt onto this resolve's listeners. */
export function attachMemoized(
  context: AttachContext,
  kind: RouteKind,
  route: Obj<RouteSpecCommon>,
  attach: () => ParentOutcome[],
): ParentOutcome[] {
  const hit = memo.get(route);
  if (hit?.context === context && hit.kind === kind) {
    return hit.parents.map((p) => ({
      parentRef: p.parentRef,
      accepted: p.accepted,
      attachments: p.attachments.map((a): Attachment => ({
        listener: context.listeners.get(a.id)!,
        hostnames: a.hostnames,
      })),
    }));
  }
  const parents = attach();
  memo.set(route, {
    context,
    kind,
    parents: parents.map((p) => ({
      parentRef: p.parentRef,
      accepted: p.accepted,
      attachments: p.attachments.map((a) => ({ id: a.listener.id, hostnames: a.hostnames })),
    })),
  });
  return parents;
}
