/**
 * Route conversion, memoized: a route converts to the same rules as long as it is the same
 * (admitted) object and every lookup its conversion made (the Services and mesh-name owners its
 * backendRefs resolved to, the ReferenceGrants when it crossed namespaces) gives the same object
 * again (reads.ts). Conversion is pure and returns what it needs of the resolve as data (the
 * clusters and conflicts in ConvertedRoute), so a hit is simply the remembered result; only a
 * route an edit replaced, or whose backends an edit replaced, is converted again. Converted
 * routes are shared between resolves: read-only. One ConvertMemo per resolver (a ResolveState's).
 * @module
 */
import { IdentityMemo, sameItems } from "../../memo/mod.ts";
import { type LookupWorld, Reads, readsHold } from "../reads.ts";
import type { ConvertedRoute } from "../routes/kind.ts";
import type { ObjectIndex } from "../object_index.ts";
import type { KubeObject } from "../types.ts";

/** Converts `route` (for Service parents when `mesh`), recording its lookups in `reads`. */
export type RouteConverter = (route: KubeObject, mesh: boolean, reads: Reads) => ConvertedRoute;

/** What references resolve against in one resolve (the same object while nothing changed). */
export type ConvertContext = LookupWorld;

interface Entry {
  context: ConvertContext;
  reads: Reads;
  converted: ConvertedRoute;
}

/** Conversions by route (edge and mesh side), and the context of the owner's last resolve. */
export class ConvertMemo {
  readonly edge = new IdentityMemo<KubeObject, Entry>();
  readonly mesh = new IdentityMemo<KubeObject, Entry>();
  #last:
    | { services: readonly KubeObject[]; imports: readonly KubeObject[]; context: ConvertContext }
    | undefined;

  /**
   * The conversion context of `indexed` (with the mesh-name `owners` of its Services): the same
   * object as the previous resolve's when its Services and ReferenceGrants are the same objects
   * in the same order, else a new one (whose `grants` is still the previous array when only
   * Services changed).
   */
  context(
    indexed: ObjectIndex,
    meshDomain: string,
    owners: ReadonlyMap<string, KubeObject>,
  ): ConvertContext {
    const services = [...indexed.services.values()];
    const imports = [...indexed.serviceImports.values()];
    const last = this.#last;
    const sameGrants = last !== undefined && sameItems(last.context.grants, indexed.grants);
    if (
      last?.context.meshDomain === meshDomain && sameGrants &&
      sameItems(last.services, services) && sameItems(last.imports, imports)
    ) {
      return last.context;
    }
    const context: ConvertContext = {
      meshDomain,
      services: indexed.services,
      imports: indexed.serviceImports,
      owners,
      grants: sameGrants ? last.context.grants : [...indexed.grants],
    };
    this.#last = { services, imports, context };
    return context;
  }

  /**
   * `convert(route, mesh, reads)`, or the remembered result for the same route while the lookups
   * its conversion recorded in `reads` still hold in `context`. (A caller makes its `convert` once
   * per resolve, not per route: a hit allocates nothing.)
   */
  convert(
    context: ConvertContext,
    route: KubeObject,
    mesh: boolean,
    convert: RouteConverter,
  ): ConvertedRoute {
    const memo = mesh ? this.mesh : this.edge;
    const hit = memo.peek(route);
    if (hit !== undefined && readsHold(hit.reads, hit.context, context)) {
      memo.count(true);
      return hit.converted;
    }
    memo.count(false);
    const reads = new Reads();
    const converted = convert(route, mesh, reads);
    memo.set(route, { context, reads, converted });
    return converted;
  }
}
