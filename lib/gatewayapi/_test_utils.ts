/**
 * Test support for resolve: one resolve with the CEL library loaded when admission reaches a rule
 * that needs it (the engine, lib/engine, does this for every role; tests resolve directly).
 * @module
 */
import { CelNotLoaded } from "./admission/mod.ts";
import { resolve, type ResolveOptions, type ResolveResult } from "./resolve.ts";
import { ResolveState } from "./state/mod.ts";
import type { KubeObject } from "./types.ts";

/**
 * resolve(), loading the CEL library first when admission reaches a rule that needs it: the first
 * resolve of a state that needs it stops at the first such object, loads the library and resolves
 * again (the objects admitted before it are remembered).
 */
export async function resolveLoadingCel(
  objects: KubeObject[],
  options: ResolveOptions = {},
  state: ResolveState = new ResolveState(),
): Promise<ResolveResult> {
  try {
    return resolve(objects, options, state);
  } catch (e) {
    if (!(e instanceof CelNotLoaded) || state.cel.loaded) throw e;
  }
  await state.cel.load();
  return resolve(objects, options, state);
}
