/**
 * Route conversion, memoized: a route converts to the same rules as long as it is the same
 * (admitted) object and the Services and ReferenceGrants its backendRefs resolve against are the
 * same objects. A hit replays what the conversion did to the Backends (clusters made, conflicts
 * reported), so the result of resolve is the same as without the memo; only a route an edit
 * replaced is converted again. Converted routes are shared between resolves: read-only.
 * @module
 */
import type { BackendEffect, Backends } from "./backends.ts";
import type { ConvertedRoute } from "./rule_common.ts";
import type { Snapshot } from "./snapshot.ts";
import type { KubeObject } from "./types.ts";

/** What references resolve against; equal identities mean equal conversions. */
interface Context {
  meshDomain: string;
  services: readonly KubeObject[];
  grants: readonly KubeObject[];
}

interface Entry {
  context: Context;
  converted: ConvertedRoute;
  effects: BackendEffect[];
}

/** Per admitted route object: its edge and mesh conversions. */
const memo = new WeakMap<KubeObject, { edge?: Entry; mesh?: Entry }>();

/** The context of the last resolve; a resolve over the same objects gets this very object. */
let last: Context | undefined;

const sameItems = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((x, i) => x === b[i]);

/**
 * The conversion context of `snapshot`: the same object as the previous resolve's when its
 * Services and ReferenceGrants are the same objects in the same order, else a new one.
 */
export function conversionContext(snapshot: Snapshot, meshDomain: string): Context {
  const services = [...snapshot.services.values()];
  if (
    last?.meshDomain === meshDomain && sameItems(last.services, services) &&
    sameItems(last.grants, snapshot.grants)
  ) {
    return last;
  }
  return last = { meshDomain, services, grants: [...snapshot.grants] };
}

/** `convert()` of `route`, or the remembered result for the same route in the same context. */
export function convertMemoized(
  backends: Backends,
  context: Context,
  route: KubeObject,
  mesh: boolean,
  convert: () => ConvertedRoute,
): ConvertedRoute {
  const side = mesh ? "mesh" : "edge";
  let byRoute = memo.get(route);
  const hit = byRoute?.[side];
  if (hit?.context === context) {
    backends.replay(hit.effects);
    return hit.converted;
  }
  const { result, effects } = backends.record(convert);
  if (!byRoute) memo.set(route, byRoute = {});
  byRoute[side] = { context, converted: result, effects };
  return result;
}
