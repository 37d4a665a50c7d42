import assert from "node:assert/strict";
import { crdDir, readCrds } from "../../../../tools/gen_crds.ts";
import { CelCompiler } from "./library.ts";
import { CelNotLoaded, CelRules } from "./rules.ts";
import { HAND_PREDICATES } from "./predicates.ts";
import { FACTS } from "../crd/facts.gen.ts";
import { buildCrdSchemas, type RuleUse } from "../crd/schema.ts";
import { gatewayReadKinds } from "../../catalogue/mod.ts";
import { ROUTE_KINDS } from "../../routes/registry.ts";
import { ADMISSION_KINDS } from "../../read_kinds.ts";
import { any, type CelEvaluator } from "../structural_schema.ts";
import * as validate from "../validate.ts";
import type { KubeObject } from "../../types.ts";

/** The Gateway API kinds aether admits. */
const GATEWAY_KINDS = gatewayReadKinds(ROUTE_KINDS);
const applyDefaults = (obj: KubeObject, cel?: CelEvaluator) =>
  validate.applyDefaults(obj, ADMISSION_KINDS, cel);
const validateObject = (obj: KubeObject, cel?: CelEvaluator) =>
  validate.validateObject(obj, ADMISSION_KINDS, cel);

// deno-lint-ignore no-explicit-any
type Yaml = any;

/** Every x-kubernetes-validations rule in a CRD schema tree. */
function rulesIn(schema: Yaml, out: string[] = []): string[] {
  if (!schema || typeof schema !== "object") return out;
  for (const v of schema["x-kubernetes-validations"] ?? []) out.push(v.rule);
  for (const sub of Object.values(schema.properties ?? {})) rulesIn(sub, out);
  for (const sub of [schema.items, schema.additionalProperties, schema.not]) rulesIn(sub, out);
  for (const sub of [...(schema.oneOf ?? []), ...(schema.anyOf ?? [])]) rulesIn(sub, out);
  return out;
}

Deno.test("cel: every rule of every vendored CRD (both channels) compiles with the library", async () => {
  const cel = new CelCompiler();
  let n = 0;
  for (const channel of ["standard", "experimental"]) {
    for (const crd of await readCrds(crdDir(channel))) {
      for (const version of crd.spec.versions) {
        for (const rule of rulesIn(version.schema.openAPIV3Schema)) {
          assert.doesNotThrow(() => cel.compile(rule, any()), `${crd.metadata.name}: ${rule}`);
          n++;
        }
      }
    }
  }
  assert.ok(n > 500, `found only ${n} rules`);
});

/** The fact nodes reachable from the admitted kinds' roots. */
function reachable(): Set<number> {
  const seen = new Set<number>();
  const visit = (i: number) => {
    if (seen.has(i)) return;
    seen.add(i);
    const n = FACTS.nodes[i];
    for (const c of Object.values(n.properties ?? {})) visit(c);
    for (const c of [n.items, n.additionalProperties, n.not]) if (c !== undefined) visit(c);
    for (const c of [...(n.oneOf ?? []), ...(n.anyOf ?? [])]) visit(c);
  };
  for (const kind of GATEWAY_KINDS) {
    for (const root of Object.values(FACTS.kinds[kind].versions)) visit(root);
  }
  return seen;
}

Deno.test("cel: admission checks every create-time rule of the admitted kinds", async () => {
  const cel = await new CelRules().load();
  const uses: RuleUse[] = [];
  buildCrdSchemas(FACTS, GATEWAY_KINDS, HAND_PREDICATES, uses);
  const want: string[] = [];
  for (const i of [...reachable()].sort((a, b) => a - b)) {
    for (const r of FACTS.nodes[i].rules ?? []) if (!r.transition) want.push(`${i}: ${r.rule}`);
  }
  const got = uses.map((u) => `${u.node}: ${u.rule.rule}`).sort();
  assert.deepEqual(got, want.sort());
  assert.ok(uses.some((u) => u.by === "hand") && uses.some((u) => u.by === "library"));
  for (const u of uses) {
    // Every rule has a working library check (the hand predicates are held to it by the
    // differential test).
    assert.equal(typeof u.library(undefined, cel), "boolean");
  }
});

Deno.test("cel: a hand predicate whose message no CRD rule has is refused", () => {
  const hand = { ...HAND_PREDICATES, "no such rule": () => true };
  assert.throws(
    () => buildCrdSchemas(FACTS, GATEWAY_KINDS, hand),
    /hand predicates match no CRD rule: \["no such rule"\]/,
  );
});

Deno.test("cel: a rule without a hand predicate is evaluated by the library", async () => {
  const cel = await new CelRules().load();
  const route = applyDefaults({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name: "r", namespace: "ns" },
    spec: {
      rules: [{
        filters: [{ type: "CORS", cors: { allowOrigins: ["*", "https://a.example"] } }],
      }],
    },
  }, cel);
  assert.deepEqual(validateObject(route, cel).map((p) => `${p.field}: ${p.message}`), [
    "spec.rules[0].filters[0].cors.allowOrigins: AllowOrigins cannot contain '*' alongside other origins",
  ]);
  // Without the library the walk cannot decide: it stops, naming what to do.
  assert.throws(() => validateObject(route), CelNotLoaded);
  assert.throws(() => validateObject(route, new CelRules()), /through the engine/);
  route.spec.rules[0].filters[0].cors.allowOrigins = ["*"];
  assert.deepEqual(validateObject(route, cel), []);
});
