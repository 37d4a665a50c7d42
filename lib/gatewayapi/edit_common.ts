/**
 * What the edit paths of resolve (edit.ts: a few routes; endpoints_edit.ts: ClusterSetEndpoints
 * objects; add_edit.ts: one route more) check a revision against the last one with: the changed
 * positions, the options, an object admitted on its own, a route converted on the last resolve,
 * the clusters a virtual host reaches.
 * Pure.
 * @module
 */
import { admit } from "./admission/mod.ts";
import type { ResolveState } from "./state/mod.ts";
import type { ResolveOptions } from "./resolve_types.ts";
import type { ConvertedRoute, RouteKindDef } from "./routes/kind.ts";
import type { Obj } from "./object_index.ts";
import type { KubeObject, Problem, RouteSpecCommon } from "./types.ts";
import type { IRVirtualHost } from "../ir/mod.ts";

/** The positions where `objects` differs from `before`; undefined past `max` or another length. */
export function changedPositions(
  objects: readonly KubeObject[],
  before: readonly KubeObject[],
  max: number,
): number[] | undefined {
  if (objects.length !== before.length) return undefined;
  const changed: number[] = [];
  for (let i = 0; i < objects.length; i++) {
    if (objects[i] === before[i]) continue;
    if (changed.length === max) return undefined;
    changed.push(i);
  }
  return changed;
}

/** The same options: the same keys with the same values (arrays the same objects). */
export function sameOptions(a: ResolveOptions, b: ResolveOptions): boolean {
  if (a === b) return true;
  const keys = Object.keys(a) as (keyof ResolveOptions)[];
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}

/** The one admitted object of `raw` (as the last resolve admitted), or undefined with problems. */
export function admitted(raw: KubeObject, state: ResolveState): KubeObject | undefined {
  const last = state.last.value!;
  const problems: Problem[] = [];
  const out = admit(
    [raw],
    problems,
    last.admission,
    last.options.admitted === true,
    state.admitted,
    state.cel,
  );
  return problems.length === 0 && out.length === 1 ? out[0] : undefined;
}

/** `route` (an edge route of kind `def`) converted with the last resolve's context and Backends. */
export function convertOnLast(
  state: ResolveState,
  def: RouteKindDef,
  route: Obj<RouteSpecCommon>,
): ConvertedRoute {
  const last = state.last.value!;
  return state.convert.convert(
    last.context,
    route,
    false,
    (r, mesh, reads) =>
      last.backends.reading(reads, () => def.convert(last.backends, r as Obj<never>, mesh)),
  );
}

/** The clusters the routes of a virtual host forward or mirror to. */
export function vhostClusters(vhost: IRVirtualHost): Set<string> {
  const names = new Set<string>();
  for (const r of vhost.routes) {
    if (r.action.kind !== "forward") continue;
    for (const b of r.action.backends) names.add(b.cluster);
    for (const m of r.action.mirrors) names.add(m.cluster);
  }
  return names;
}
