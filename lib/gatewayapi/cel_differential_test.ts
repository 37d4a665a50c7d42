/**
 * Differential test of the hand-written CEL predicates (cel_predicates.ts) against the CRD rules
 * themselves, run by the CEL library: on every object of the golden corpus (lib/gatewayapi/
 * testdata, the bench fixtures) and on mutations generated from them (a field removed, added,
 * set to each enum value or to a tricky value, a list item duplicated or dropped), every rule
 * with a hand predicate is evaluated both ways on every node it sits on, after defaulting, as the
 * API server validates. Any disagreement fails the test.
 */
import assert from "node:assert/strict";
import { parseAllDocuments } from "yaml";
import { syntheticConfig } from "../../bench/fixtures.ts";
import { CelCompiler } from "./cel_library.ts";
import { HAND_PREDICATES } from "./cel_predicates.ts";
import { cloneData, isObject } from "./clone.ts";
import { compileChecker, type SchemaChecker } from "./compile_checker.ts";
import { FACTS } from "./crd_facts.gen.ts";
import { buildCrdSchemas, type CrdKindSchema, type RuleUse } from "./crd_schema.ts";
import { GATEWAY_KINDS } from "./kinds.ts";
import type { Schema } from "./structural_schema.ts";

// deno-lint-ignore no-explicit-any
type Json = any;

const uses: RuleUse[] = [];
const kinds: Record<string, CrdKindSchema> = buildCrdSchemas(
  FACTS,
  GATEWAY_KINDS,
  HAND_PREDICATES,
  new CelCompiler(),
  uses,
);
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

/** The Gateway API objects of the corpus: golden inputs and the bench's synthetic config. */
function corpus(): Json[] {
  const objects: Json[] = [];
  const dir = new URL("./testdata/", import.meta.url);
  for (const e of [...Deno.readDirSync(dir)].sort((a, b) => a.name.localeCompare(b.name))) {
    if (!e.name.endsWith(".in.yaml")) continue;
    for (const doc of parseAllDocuments(Deno.readTextFileSync(new URL(e.name, dir)))) {
      objects.push(doc.toJS());
    }
  }
  objects.push(...syntheticConfig({ services: 3, routes: 3, port: 10080 }), ...SEEDS);
  return objects.filter((o) => isObject(o) && typeof o.kind === "string" && kinds[o.kind]);
}

const V1 = "gateway.networking.k8s.io/v1";
const seed = (kind: string, spec: Json) => ({
  apiVersion: V1,
  kind,
  metadata: { name: "seed" },
  spec,
});
const gateway = (addresses: Json[]) =>
  seed("Gateway", {
    gatewayClassName: "c",
    listeners: [{ name: "a", port: 80, protocol: "HTTP" }],
    addresses,
  });
const prefixRewrite = (type: "URLRewrite" | "RequestRedirect") => {
  const member = type === "URLRewrite" ? "urlRewrite" : "requestRedirect";
  return {
    type,
    [member]: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/b" } },
  };
};
const matches = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ path: { type: "PathPrefix", value: `/${i}` } }));

/** Objects that reach rules the golden corpus leaves one-sided; mutated like the rest. */
const SEEDS: Json[] = [
  gateway([{ type: "IPAddress", value: "10.0.0.1" }, { type: "Hostname", value: "a.example" }]),
  gateway([{ type: "Hostname", value: "a.example" }, { type: "IPAddress", value: "10.0.0.1" }]),
  seed("HTTPRoute", {
    rules: [{ filters: [{ type: "CORS", cors: { allowOrigins: ["https://a.example"] } }] }],
  }),
  ...(["URLRewrite", "RequestRedirect"] as const).map((type) =>
    seed("HTTPRoute", {
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: "/a" } }],
        backendRefs: [{ name: "s", port: 80, filters: [prefixRewrite(type)] }],
      }],
    })
  ),
];

/** Checked as they are, not mutated (too large): 128 matches in all, then 129. */
const LARGE: Json[] = [
  seed("HTTPRoute", { rules: [{ matches: matches(64) }, { matches: matches(64) }] }),
  seed("HTTPRoute", {
    rules: [{ matches: matches(64) }, { matches: matches(64) }, { matches: matches(1) }],
  }),
];

/** Per hand rule (by message): how often it held and failed, both ways agreeing. */
type Tally = Map<string, { held: number; failed: number }>;

/** The library's verdicts so far, per rule use and value (variants share most subtrees). */
const verdicts = new Map<RuleUse, Map<string, boolean>>();
function libraryVerdict(u: RuleUse, value: unknown): boolean {
  let byValue = verdicts.get(u);
  if (!byValue) verdicts.set(u, byValue = new Map());
  const key = JSON.stringify(value);
  let verdict = byValue.get(key);
  if (verdict === undefined) byValue.set(key, verdict = u.library(value));
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

const STRINGS = [
  "",
  "a",
  "/",
  "/a",
  "//a",
  "/a/../b",
  "/a/.",
  "/a/..",
  "/%2fa",
  "/a#b",
  "relative",
  "a b",
  "/a/./b",
  "/%2Fa",
  ".svc",
  "Svc_1",
  "1s",
  "2s",
  "0s",
  "Service",
  "Gateway",
  "HTTP",
  "HTTPS",
  "TLS",
  "TCP",
  "UDP",
  "Hostname",
  "IPAddress",
  "bad_host!",
  "10.0.0.1",
];
const INTS = [0, 1, 80, 100, 101, 8080];

/** A small value of `schema` to add where a field is missing. */
function sample(schema: Schema): unknown {
  switch (schema.t) {
    case "string":
      return schema.enum?.[0] ?? "a";
    case "int":
      return schema.enum?.[0] ?? 80;
    case "bool":
      return true;
    case "array":
      return [sample(schema.items)];
    case "map":
      return { a: sample(schema.values) };
    case "object": {
      const out: Record<string, unknown> = {};
      for (const key of schema.required ?? []) out[key] = sample(schema.props[key]);
      return out;
    }
    default:
      return "a";
  }
}

/** Variants of `value` (at the root) with one change somewhere inside it. */
function* mutations(schema: Schema, value: unknown): Generator<unknown> {
  if (schema.t === "string") {
    yield* [...(schema.enum ?? []), ...STRINGS].filter((s) => s !== value);
  } else if (schema.t === "int") {
    yield* [...(schema.enum ?? []), ...INTS].filter((n) => n !== value);
  } else if (schema.t === "array" && Array.isArray(value)) {
    if (value.length > 0) {
      yield [...value, cloneData(value[0])];
      yield value.slice(1);
    }
    for (let i = 0; i < value.length; i++) {
      for (const v of mutations(schema.items, value[i])) {
        yield [...value.slice(0, i), v, ...value.slice(i + 1)];
      }
    }
  } else if (schema.t === "object" && isObject(value)) {
    for (const [key, sub] of Object.entries(schema.props)) {
      if (value[key] === undefined) {
        yield { ...value, [key]: sample(sub) };
        continue;
      }
      const { [key]: _dropped, ...rest } = value;
      yield rest;
      for (const v of mutations(sub, value[key])) yield { ...value, [key]: v };
    }
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
      const { value, errors } = checkerOf(body)({ spec: variant });
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
