/**
 * Differential test of the hand-written CEL predicates (admission/cel/predicates.ts) against the CRD rules
 * themselves, run by the CEL library: on every object of the golden corpus (lib/gatewayapi/
 * testdata, the bench fixtures) and on mutations generated from them (a field removed, added,
 * set to each enum value or to a tricky value, a list item duplicated or dropped), every rule
 * with a hand predicate is evaluated both ways on every node it sits on, after defaulting, as the
 * API server validates. Any disagreement fails the test.
 */
import assert from "node:assert/strict";
import { CelRules } from "./rules.ts";
import { HAND_PREDICATES } from "./predicates.ts";
import { isObject } from "../../../data/mod.ts";
import { compileChecker, type SchemaChecker } from "../compile_checker.ts";
import { FACTS } from "../crd/facts.gen.ts";
import { buildCrdSchemas, type CrdKindSchema, type RuleUse } from "../crd/schema.ts";
import { gatewayReadKinds } from "../../catalogue/mod.ts";
import { ROUTE_KINDS } from "../../routes/registry.ts";
import type { Schema } from "../structural_schema.ts";
import { corpus, LARGE, mutations } from "../../../../testbed/fixtures/mutation_corpus.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const uses: RuleUse[] = [];
const kinds: Record<string, CrdKindSchema> = buildCrdSchemas(
  FACTS,
  gatewayReadKinds(ROUTE_KINDS),
  HAND_PREDICATES,
  uses,
);
const cel = await new CelRules().load();
const checkers = new Map<Schema, SchemaChecker>();
const checkerOf = (body: Schema) => {
  if (!checkers.has(body)) checkers.set(body, compileChecker(body));
  return checkers.get(body)!;
};
const ruleMessages = new Set(uses.map((u) => u.rule.message));
/** Problems that leave every value well-typed, so the rules must still agree on the object. */
const verdictNeutral = (message: string) =>
  ruleMessages.has(message) || message.startsWith("unsupported value ") ||
  message.startsWith("Duplicate value: ");
const handBySchema = new Map<Schema, RuleUse[]>();
for (const u of uses) {
  if (u.by === "hand") handBySchema.set(u.schema, [...(handBySchema.get(u.schema) ?? []), u]);
}

/** Per hand rule (by message): how often it held and failed, both ways agreeing. */
type Tally = Map<string, { held: number; failed: number }>;

/** The library's verdicts so far, per rule use and value (variants share most subtrees). */
const verdicts = new Map<RuleUse, Map<string, boolean>>();
function libraryVerdict(u: RuleUse, value: unknown): boolean {
  let byValue = verdicts.get(u);
  if (!byValue) verdicts.set(u, byValue = new Map());
  const key = JSON.stringify(value);
  let verdict = byValue.get(key);
  if (verdict === undefined) byValue.set(key, verdict = u.library(value, cel));
  return verdict;
}

/** Compares hand and library on every hand rule of every node of `value`; returns mismatches. */
function compare(schema: Schema, value: unknown, path: string, tally: Tally, out: string[]) {
  if (value === undefined || value === null) return;
  for (const u of handBySchema.get(schema) ?? []) {
    let hand: boolean;
    try {
      hand = u.check(value) === true;
    } catch {
      hand = false;
    }
    const library = libraryVerdict(u, value);
    if (hand !== library) {
      const text = JSON.stringify(value).slice(0, 300);
      out.push(`${path}: "${u.rule.message}": hand ${hand}, CEL ${library} on ${text}`);
    }
    const t = tally.get(u.rule.message) ?? { held: 0, failed: 0 };
    if (library) t.held++;
    else t.failed++;
    tally.set(u.rule.message, t);
  }
  if (schema.t === "object" && isObject(value)) {
    for (const key in value) {
      const sub = schema.props[key];
      if (sub) compare(sub, value[key], `${path}.${key}`, tally, out);
    }
  } else if (schema.t === "map" && isObject(value)) {
    for (const key in value) compare(schema.values, value[key], `${path}[${key}]`, tally, out);
  } else if (schema.t === "array" && Array.isArray(value)) {
    value.forEach((v, i) => compare(schema.items, v, `${path}[${i}]`, tally, out));
  }
}

Deno.test("cel differential: hand predicates agree with the CRD rules on the corpus and its mutations", () => {
  const objects = corpus();
  assert.ok(objects.length > 100, `corpus has only ${objects.length} Gateway API objects`);
  const tally: Tally = new Map();
  const mismatches: string[] = [];
  const seen = new Set<string>();
  let variants = 0;
  for (const obj of [...objects, ...LARGE]) {
    const kind = kinds[obj.kind];
    const body = kind.bodies[obj.apiVersion] ?? kind.bodies[kind.apiVersions[0]];
    const spec = body.t === "object" ? body.props.spec : undefined;
    if (!spec || obj.spec === undefined) continue;
    const all = LARGE.includes(obj) ? [obj.spec] : [obj.spec, ...mutations(spec, obj.spec)];
    for (const variant of all) {
      const key = `${obj.kind} ${JSON.stringify(variant)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const { value, errors } = checkerOf(body)({ spec: variant }, true, cel);
      // A structural problem other than an enum or a duplicate (a required field missing, a
      // wrong type, a pattern or bound broken): the API server rejects the object whatever the
      // rules say, and a rule reading the field may rightly error on it (duration("a")).
      if (errors.some((e) => !verdictNeutral(e.message))) continue;
      variants++;
      const defaulted = value as Json;
      compare(spec, defaulted.spec, `${obj.kind}/${obj.metadata?.name}.spec`, tally, mismatches);
      if (mismatches.length > 20) break;
    }
  }
  assert.deepEqual(mismatches, [], `${mismatches.length} disagreements`);
  // Every hand predicate was exercised, and seen both holding and failing.
  const hand = [...new Set(uses.filter((u) => u.by === "hand").map((u) => u.rule.message))];
  const oneSided = hand.filter((m) => !tally.get(m)?.held || !tally.get(m)?.failed);
  assert.deepEqual(oneSided, [], `rules never seen both ways in ${variants} variants`);
});
