/**
 * Route conversion, memoized: a route converts to the same rules as long as it is the same
 * (admitted) object and the Services and ReferenceGrants its backendRefs resolve against are the
 * same objects. Conversion is pure and returns what it needs of the resolve as data (the clusters
 * and conflicts in ConvertedRoute), so a hit is simply the remembered result; only a route an
 * edit replaced is converted again. Converted routes are shared between resolves: read-only. One
 * ConvertMemo per resolver (a ResolveState's).
 * @module
 */
import { IdentityMemo, sameItems } from "../memo/mod.ts";
import type { ConvertedRoute } from "./rule_common.ts";
import type { ObjectIndex } from "./object_index.ts";
import type { KubeObject } from "./types.ts";

/** What references resolve against; equal identities mean equal conversions. */
export interface ConvertContext {
  meshDomain: string;
  services: readonly KubeObject[];
  grants: readonly KubeObject[];
}

interface Entry {
  context: ConvertContext;
  converted: ConvertedRoute;
}

/** Conversions by route (edge and mesh side), and the context of the owner's last resolve. */
export class ConvertMemo {
  readonly edge = new IdentityMemo<KubeObject, Entry>();
  readonly mesh = new IdentityMemo<KubeObject, Entry>();
  #last: ConvertContext | undefined;

  /**
   * The conversion context of `indexed`: the same object as the previous resolve's when its
   * Services and ReferenceGrants are the same objects in the same order, else a new one.
   */
  context(indexed: ObjectIndex, meshDomain: string): ConvertContext {
    const services = [...indexed.services.values()];
    const last = this.#last;
    if (
      last?.meshDomain === meshDomain && sameItems(last.services, services) &&
      sameItems(last.grants, indexed.grants)
    ) {
      return last;
    }
    return this.#last = { meshDomain, services, grants: [...indexed.grants] };
  }

  /** `convert()` of `route`, or the remembered result for the same route in the same context. */
  convert(
    context: ConvertContext,
    route: KubeObject,
    mesh: boolean,
    convert: () => ConvertedRoute,
  ): ConvertedRoute {
    const memo = mesh ? this.mesh : this.edge;
    return memo.get(
      route,
      () => ({ context, converted: convert() }),
      (hit) => hit.context === context,
    ).converted;
  }
}
