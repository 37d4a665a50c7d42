/**
 * Route attachment, memoized: a route attaches the same way as long as it is the same (admitted)
 * object and what attachment reads is the same — our Gateways (the same objects in the same
 * order) and the labels of every Namespace. Outcomes name listeners by id, so a hit is the
 * remembered outcomes themselves, shared between resolves and never changed (resolve settles
 * conflicts into new values); only a route an edit replaced is attached again. One AttachMemo
 * per resolver (a ResolveState's).
 * @module
 */
import type { ParentOutcome } from "../attachment.ts";
import type { GatewayState } from "../gateways.ts";
import type { RouteKind } from "../routes/kind.ts";
import { IdentityMemo, sameItems } from "../../memo/mod.ts";
import type { Obj } from "../object_index.ts";
import type { KubeObject, RouteSpecCommon } from "../types.ts";

/** What attachment reads besides the route; equal identities mean equal attachments. */
export interface AttachContext {
  readonly gateways: readonly KubeObject[];
  readonly namespaces: ReadonlyMap<string, Record<string, string>>;
}

interface Entry {
  context: AttachContext;
  kind: RouteKind;
  parents: readonly ParentOutcome[];
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
   * The attachment context of one resolve: the previous resolve's when the Gateways and
   * Namespace labels are the same, else a new one.
   */
  context(
    gateways: readonly GatewayState[],
    namespaces: ReadonlyMap<string, Record<string, string>>,
  ): AttachContext {
    const objects = gateways.map((g) => g.gateway);
    const last = this.#last;
    if (last && sameItems(last.gateways, objects) && sameLabels(last.namespaces, namespaces)) {
      return last;
    }
    return this.#last = { gateways: objects, namespaces };
  }

  /**
   * `attach(route)`, or its remembered outcomes (read-only, as are attach()'s). (A caller makes
   * its `attach` once per resolve and kind, not per route: a hit allocates nothing.)
   */
  attach(
    context: AttachContext,
    kind: RouteKind,
    route: Obj<RouteSpecCommon>,
    attach: (route: Obj<RouteSpecCommon>) => readonly ParentOutcome[],
  ): readonly ParentOutcome[] {
    const hit = this.routes.peek(route);
    if (hit !== undefined && hit.context === context && hit.kind === kind) {
      this.routes.count(true);
      return hit.parents;
    }
    this.routes.count(false);
    const parents = attach(route);
    this.routes.set(route, { context, kind, parents });
    return parents;
  }
}
