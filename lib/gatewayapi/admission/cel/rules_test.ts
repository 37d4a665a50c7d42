/**
 * The CEL library loads only for a config that reaches a CRD rule without a hand predicate: a
 * resolve that never does leaves it unloaded; one that does stops with CelNotLoaded when resolved
 * synchronously, and resolveLoadingCel loads it and gives what a resolve with it loaded gives.
 */
import assert from "node:assert/strict";
import { gateway, gatewayClass, httpRoute } from "../../../../testbed/fixtures/objects.ts";
import { CelNotLoaded, CelRules } from "./rules.ts";
import { resolve } from "../../resolve.ts";
import { resolveLoadingCel } from "../../_test_utils.ts";
import { ResolveState } from "../../state/mod.ts";
import type { KubeObject } from "../../types.ts";

const base = (): KubeObject[] => [
  gatewayClass(),
  gateway("edge", [{ name: "http", protocol: "HTTP", port: 8080 }]),
  httpRoute("plain", {
    parentRefs: [{ name: "edge" }],
    rules: [{ matches: [{ path: { type: "PathPrefix", value: "/a" } }] }],
  }),
];
/** A CORS list may not hold "*" beside other origins: checked by the CEL library only. */
const cors = (origins: string[]) =>
  httpRoute("cors", {
    parentRefs: [{ name: "edge" }],
    rules: [{ filters: [{ type: "CORS", cors: { allowOrigins: origins } }] }],
  });
const problems = (r: { problems: { field: string; message: string }[] }) =>
  r.problems.map((p) => `${p.field}: ${p.message}`);

Deno.test("cel rules: a config without library rules never loads the library", async () => {
  const state = new ResolveState();
  const result = await resolveLoadingCel(base(), {}, state);
  assert.deepEqual(result.problems, []);
  assert.equal(state.cel.loaded, false);
  // Nor does a synchronous resolve of it need the library.
  assert.deepEqual(resolve(base(), {}, state).problems, []);
  assert.equal(state.cel.loaded, false);
});

Deno.test("cel rules: a library rule loads the library, then resolves as with it loaded", async () => {
  const objects = [...base(), cors(["*", "https://a.example"])];
  assert.throws(() => resolve(objects, {}, new ResolveState()), CelNotLoaded);
  const state = new ResolveState();
  const lazy = await resolveLoadingCel(objects, {}, state);
  assert.equal(state.cel.loaded, true);
  const eager = resolve(objects, {}, new ResolveState(await new CelRules().load()));
  assert.deepEqual(lazy, eager);
  assert.deepEqual(problems(lazy), [
    "spec.rules[0].filters[0].cors.allowOrigins: AllowOrigins cannot contain '*' alongside other origins",
  ]);
  // Loaded once per state: the next resolve of the state needs no load.
  assert.deepEqual(resolve([...base(), cors(["*"])], {}, state).problems, []);
});

Deno.test("cel rules: states may share one loaded library", async () => {
  const cel = await new CelRules().load();
  const objects = [...base(), cors(["https://a.example", "*"])];
  const a = resolve(objects, {}, new ResolveState(cel));
  const b = resolve(structuredClone(objects), {}, new ResolveState(cel));
  assert.deepEqual(problems(a), problems(b));
  assert.equal(problems(a).length, 1);
});
