/**
 * The Gateway API kinds' structural schemas, built from the generated CRD facts
 * (facts.gen.ts, from the vendored YAML): every bound, pattern, enum, default, required field
 * and list type comes from there. Each CEL rule gets a check: the hand-written predicate with the
 * rule's message when there is one (admission/cel/predicates.ts, fast; admission/cel/differential_test.ts holds it
 * equal to the rule), else the rule itself, handed to the walk's CEL evaluator (admission/cel/rules.ts loads
 * the library only when a config reaches such a rule).
 * Transition rules (`oldSelf`) are skipped: the API server does not run them on create.
 * @module
 */
import { isIP } from "node:net";
import type { CrdFacts, CrdNode, CrdRule } from "./facts.ts";
import { celFor } from "../cel/rules.ts";
import { isObject } from "../../../data/mod.ts";
import {
  any,
  arr,
  bool,
  type CelEvaluator,
  type CelRule,
  int,
  intOrString,
  map,
  obj,
  type Rule,
  type Schema,
  str,
} from "../structural_schema.ts";

/** A hand-written predicate of a CRD rule, by the rule's message. */
export type HandPredicates = Readonly<Record<string, Rule["check"]>>;

/** One CRD kind as aether admits it. */
export interface CrdKindSchema {
  group: string;
  namespaced: boolean;
  /** Served versions, as `group/version`. */
  apiVersions: readonly string[];
  /**
   * Schema of the top-level body (fields other than apiVersion, kind, metadata, status) per
   * served apiVersion (most versions of a kind share one).
   */
  bodies: Readonly<Record<string, Schema>>;
}

/** How each rule of a built schema is checked (for the coverage and differential tests). */
export interface RuleUse {
  node: number;
  rule: CrdRule;
  by: "hand" | "library";
  /** The schema node the rule sits on. */
  schema: Schema;
  /** The library's check of the rule (`cel` a loaded CelRules). */
  library: (self: unknown, cel: CelEvaluator) => boolean;
  /** The check admission runs. */
  check: Rule["check"];
}

/** Formats a string may carry, checked as the API server does. */
const FORMATS: Readonly<Record<string, (s: string) => boolean>> = {
  ipv4: (s) => isIP(s) === 4,
  ipv6: (s) => isIP(s) === 6,
  "date-time": (s) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(s),
};
/** Formats that only restate the type (the API server does not check integer widths here). */
const TYPE_FORMATS = new Set(["int32", "int64"]);

/** Builds the schemas of `kinds` from `facts`; `uses` receives how each rule is checked. */
export function buildCrdSchemas(
  facts: CrdFacts,
  kinds: readonly string[],
  hand: HandPredicates,
  uses: RuleUse[] = [],
): Record<string, CrdKindSchema> {
  const built = new Map<number, Schema>();
  const handUsed = new Set<string>();

  const schemaOf = (i: number): Schema => {
    let s = built.get(i);
    if (!s) {
      s = convert(i, facts.nodes[i]);
      built.set(i, s);
    }
    return s;
  };

  const convert = (i: number, n: CrdNode): Schema => {
    const rules: Rule[] = [];
    const common = { default: n.default, rules };
    let s: Schema;
    if (n.intOrString) s = intOrString(common);
    else if (n.type === "string") {
      s = str({
        ...common,
        min: n.minLength,
        max: n.maxLength,
        pattern: n.pattern === undefined ? undefined : new RegExp(n.pattern),
        enum: n.enum as string[] | undefined,
      });
    } else if (n.type === "integer") {
      s = int({ ...common, min: n.minimum, max: n.maximum, enum: n.enum as number[] | undefined });
    } else if (n.type === "boolean") s = bool(common);
    else if (n.type === "array") {
      const listType = n.listType === "atomic" ? undefined : n.listType;
      s = arr(schemaOf(n.items!), {
        ...common,
        min: n.minItems,
        max: n.maxItems,
        listType,
        keys: n.listMapKeys,
      });
    } else if (n.type === "object" && n.additionalProperties !== undefined) {
      s = map(schemaOf(n.additionalProperties), { ...common, maxProps: n.maxProperties });
    } else if (n.type === "object" && (n.properties || !n.preserveUnknownFields)) {
      const props: Record<string, Schema> = {};
      for (const [key, sub] of Object.entries(n.properties ?? {})) props[key] = schemaOf(sub);
      s = obj(props, {
        ...common,
        required: n.required,
        open: n.preserveUnknownFields === true,
        maxProps: n.maxProperties,
      });
    } else if (n.type === undefined || n.type === "object") s = any(common);
    else throw new Error(`CRD schema node ${i}: unsupported type ${n.type}`);

    if (n.format !== undefined && !TYPE_FORMATS.has(n.format)) {
      const ok = FORMATS[n.format];
      if (!ok) throw new Error(`CRD schema node ${i}: unsupported format ${n.format}`);
      rules.push({ message: `must be a valid ${n.format}`, check: (v: string) => ok(v) });
    }
    if (n.oneOf || n.anyOf || n.not !== undefined) {
      rules.push(junctionRule(facts.nodes, n));
    }
    for (const rule of n.rules ?? []) {
      if (rule.transition) continue;
      const celRule: CelRule = { rule: rule.rule, schema: s };
      const library = (self: unknown, cel?: CelEvaluator) =>
        celFor(cel, celRule).check(celRule, self);
      const handCheck = Object.hasOwn(hand, rule.message) ? hand[rule.message] : undefined;
      if (handCheck) handUsed.add(rule.message);
      const check = handCheck ?? library;
      rules.push({ message: rule.message, check });
      uses.push({ node: i, rule, by: handCheck ? "hand" : "library", schema: s, library, check });
    }
    return s;
  };

  const out: Record<string, CrdKindSchema> = {};
  for (const kind of kinds) {
    const k = facts.kinds[kind];
    if (!k) throw new Error(`kind ${kind} is not in the ${facts.channel} CRDs`);
    const versions = Object.entries(k.versions);
    out[kind] = {
      group: k.group,
      namespaced: k.namespaced,
      apiVersions: versions.map(([v]) => `${k.group}/${v}`),
      bodies: Object.fromEntries(versions.map(([v, root]) => [`${k.group}/${v}`, schemaOf(root)])),
    };
  }
  const unused = Object.keys(hand).filter((m) => !handUsed.has(m));
  if (unused.length > 0) {
    throw new Error(`hand predicates match no CRD rule: ${JSON.stringify(unused)}`);
  }
  return out;
}

/** A node's oneOf / anyOf / not, as one rule with the API server's wording. */
function junctionRule(nodes: readonly CrdNode[], n: CrdNode): Rule {
  const matches = (i: number, v: unknown): boolean => constraintHolds(nodes, nodes[i], v);
  return {
    message: n.oneOf
      ? "must validate one and only one schema (oneOf)"
      : n.anyOf
      ? "must validate at least one schema (anyOf)"
      : "must not validate the schema (not)",
    check: (v) =>
      (!n.oneOf || n.oneOf.filter((i) => matches(i, v)).length === 1) &&
      (!n.anyOf || n.anyOf.some((i) => matches(i, v))) &&
      (n.not === undefined || !matches(n.not, v)),
  };
}

/** Whether `v` satisfies a typeless constraint node (enum, format, properties, junctions). */
function constraintHolds(nodes: readonly CrdNode[], n: CrdNode, v: unknown): boolean {
  if (n.enum && !n.enum.includes(v as string)) return false;
  if (n.format !== undefined && typeof v === "string" && FORMATS[n.format]?.(v) === false) {
    return false;
  }
  if (n.properties && isObject(v)) {
    for (const [key, sub] of Object.entries(n.properties)) {
      if (v[key] !== undefined && !constraintHolds(nodes, nodes[sub], v[key])) return false;
    }
  }
  const holds = (i: number) => constraintHolds(nodes, nodes[i], v);
  if (n.oneOf && n.oneOf.filter(holds).length !== 1) return false;
  if (n.anyOf && !n.anyOf.some(holds)) return false;
  if (n.not !== undefined && holds(n.not)) return false;
  return true;
}
