/**
 * What the edit paths of resolve (edit.ts: a few routes; endpoints_edit.ts: ClusterSetEndpoints
 * objects) both check a revision against the last one with: the changed positions, the options,
 * and an object admitted on its own. Pure.
 * @module
 */
import { admit } from "./admission/mod.ts";
import type { ResolveState } from "./state/mod.ts";
import type { ResolveOptions } from "./resolve_types.ts";
import type { KubeObject, Problem } from "./types.ts";

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
