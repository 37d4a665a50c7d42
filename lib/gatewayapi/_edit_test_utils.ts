/**
 * The oracle of the edit, add and remove paths' tests: a result of resolveEdit() against a cold
 * resolve (a new state) of the same objects; and the helpers they share.
 * @module
 */
import assert from "node:assert/strict";
import { CelRules } from "./admission/mod.ts";
import { resolveEdit, type ResolvePath } from "./edit.ts";
import { resolve, type ResolveOptions } from "./resolve.ts";
import { ResolveState } from "./state/mod.ts";
import type { KubeObject } from "./types.ts";

/** Resolves `objects` on `state`'s edit path and cold, asserts them equal; returns the path. */
export function check(
  objects: KubeObject[],
  options: ResolveOptions,
  state: ResolveState,
  cel: CelRules,
  what: string,
): ResolvePath {
  const { result, path } = resolveEdit(objects, options, state);
  const cold = resolve(objects, options, new ResolveState(cel));
  assert.deepStrictEqual(result, cold, `${what} (${path})`);
  return path;
}

/** The CEL rules, loaded. */
export async function loadedCel(): Promise<CelRules> {
  const cel = new CelRules();
  await cel.load();
  return cel;
}

/** A count per resolve path, every one at 0. */
export const noPaths = (): Record<ResolvePath, number> => ({
  cold: 0,
  edit: 0,
  endpoints: 0,
  add: 0,
  remove: 0,
});

/** A route of `name` on `hosts` to `svc`. */
export function routeOn(name: string, hosts: string[], svc: string, age = 2): KubeObject {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      name,
      namespace: "default",
      generation: 1,
      creationTimestamp: `2026-01-0${age}T00:00:00Z`,
    },
    spec: {
      parentRefs: [{ name: "bench" }],
      hostnames: hosts,
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: `/${name}` } }],
        backendRefs: [{ name: svc, port: 8080 }],
      }],
    },
  };
}
