/**
 * Route attachment, memoized: a route attaches the same way as long as it is the same (admitted)
 * object and what attachment reads is the same — our Gateways (the same objects in the same
 * order) and the labels of every Namespace. A hit rebuilds the outcomes onto this resolve's
 * listeners (by listener id), so later steps may still change them; only a route an edit replaced
 * is attached again. Remembered parentRefs, outcomes and hostnames are shared: read-only. One
 * AttachMemo per resolver (a ResolveState's).
 * @module
 */
import type { Attachment, ParentOutcome } from "../attachment.ts";
import type { Outcome } from "../status/mod.ts";
import type { GatewayState, ListenerState } from "../gateways.ts";
import type { RouteKind } from "../routes/kind.ts";
import { IdentityMemo, sameItems } from "../../memo/mod.ts";
import type { Obj } from "../object_index.ts";
import type { KubeObject, ParentReference, RouteSpecCommon } from "../types.ts";

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

/** Attachment outcomes by route, and the context of the owner's last resolve. */
export class AttachMemo {
  readonly routes = new IdentityMemo<KubeObject, Entry>();
  /** The context of the last resolve; a resolve over the same Gateways and labels gets it again. */
  #last: AttachContext | undefined;

  /**
   * The attachment context of one resolve: the previous resolve's (with this resolve's
   * listeners) when the Gateways and Namespace labels are the same, else a new one.
   */
  context(
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
    const last = this.#last;
    if (last && sameItems(last.gateways, objects) && sameLabels(last.namespaces, namespaces)) {
      last.listeners = listeners;
      return last;
    }
    return this.#last = { gateways: objects, namespaces, listeners };
  }

  /** `attach()` of `route`, or its remembered outcomes rebuilt onto this resolve's listeners. */
  attach(
    context: AttachContext,
    kind: RouteKind,
    route: Obj<RouteSpecCommon>,
    attach: () => ParentOutcome[],
  ): ParentOutcome[] {
    let made: ParentOutcome[] | undefined;
    const entry = this.routes.get(route, () => {
      made = attach();
      return {
        context,
        kind,
        parents: made.map((p) => ({
          parentRef: p.parentRef,
          accepted: p.accepted,
          attachments: p.attachments.map((a) => ({ id: a.listener.id, hostnames: a.hostnames })),
        })),
      };
    }, (hit) => hit.context === context && hit.kind === kind);
    if (made) return made;
    return entry.parents.map((p) => ({
      parentRef: p.parentRef,
      accepted: p.accepted,
      attachments: p.attachments.map((a): Attachment => ({
        listener: context.listeners.get(a.id)!,
        hostnames: a.hostnames,
      })),
    }));
  }
}
