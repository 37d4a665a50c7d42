/**
 * The two walks the API server does with a CRD schema — defaulting, then validation — done in one
 * pass by a checker compiled once per schema node (messages, defaults and property tables
 * prepared up front). Field paths are kept as a stack of keys and only turned into text for a
 * problem, so a valid object costs no path strings. The defaulted value is copy-on-write: a
 * subtree that gets no default is the input's own, so both must be treated as read-only.
 * @module
 */
import { cloneData, isObject } from "../../data/mod.ts";
import { CelNotLoaded } from "./cel/rules.ts";
import type { CelEvaluator, Schema } from "./structural_schema.ts";

/** A validation finding: field path and message. */
export interface FieldError {
  field: string;
  message: string;
}

/** A key of a map node, written `["key"]` in a field path. */
class MapKey {
  constructor(readonly key: string) {}
}

/** Where the walk is: property names, list indexes and map keys from the root. */
type Trail = (string | number | MapKey)[];

/** The text of the first `depth` steps of a path, as `spec.rules[0].matches[1]` or `data["x"]`. */
function pathText(trail: Trail, depth: number, extra?: string): string {
  let path = "";
  for (let i = 0; i < depth; i++) {
    const step = trail[i];
    if (typeof step === "number") path += `[${step}]`;
    else if (step instanceof MapKey) path += `[${JSON.stringify(step.key)}]`;
    else path = path ? `${path}.${step}` : step;
  }
  if (extra !== undefined) path = path ? `${path}.${extra}` : extra;
  return path;
}

/**
 * The state of one walk: the findings so far, the current path, whether to apply defaults, and
 * the CEL rules' evaluator (none: reaching a library rule throws CelNotLoaded).
 */
interface Walk {
  errors: FieldError[];
  /** The path is the first `depth` steps (later slots are stale). */
  trail: Trail;
  depth: number;
  defaults: boolean;
  cel?: CelEvaluator;
}

const fail = (walk: Walk, message: string, key?: string) =>
  walk.errors.push({ field: pathText(walk.trail, walk.depth, key), message });

/** `check(value)` one step down the path, at `step`. */
function below(walk: Walk, step: string | number | MapKey, check: Checker, value: unknown) {
  const depth = walk.depth;
  walk.trail[depth] = step;
  walk.depth = depth + 1;
  const checked = check(value, walk);
  walk.depth = depth;
  return checked;
}

/**
 * Returns `value` with defaults applied (new objects only where a default went in, the input's
 * own elsewhere), recording what is wrong with it in `walk`.
 */
type Checker = (value: unknown, walk: Walk) => unknown;

/** The checkers compiled so far in one compileChecker call: a node shared by many parents is compiled once. */
type Compiled = Map<Schema, Checker>;

function checkerOf(schema: Schema, done: Compiled): Checker {
  let checker = done.get(schema);
  if (!checker) {
    checker = compile(schema, done);
    done.set(schema, checker);
  }
  return checker;
}

/** What a node's checker does once the value's type is right; its rules run after it. */
type Body = (value: never, walk: Walk) => unknown;

function compile(schema: Schema, done: Compiled): Checker {
  switch (schema.t) {
    case "any":
      return typed(schema, () => true, "", (v: unknown) => v);
    case "intOrString":
      return typed(
        schema,
        (v) => typeof v === "string" || (typeof v === "number" && Number.isInteger(v)),
        "must be an integer or a string",
        (v: unknown) => v,
      );
    case "string":
      return typed(schema, (v) => typeof v === "string", "must be a string", stringBody(schema));
    case "int":
      return typed(
        schema,
        (v) => typeof v === "number" && Number.isInteger(v),
        "must be an integer",
        intBody(schema),
      );
    case "bool":
      return typed(schema, (v) => typeof v === "boolean", "must be a boolean", (v: boolean) => v);
    case "array":
      return typed(schema, Array.isArray, "must be a list", arrayBody(schema, done));
    case "map":
      return typed(schema, isObject, "must be an object", mapBody(schema, done));
    case "object":
      return typed(schema, isObject, "must be an object", objectBody(schema, done));
  }
}

/** A checker: the type check, then `body`, then the node's CEL rules on what `body` returned. */
function typed(schema: Schema, typeOk: (v: unknown) => boolean, message: string, body: Body) {
  const run = body as Checker;
  const rules = schema.rules ?? [];
  if (rules.length === 0) {
    return (v: unknown, walk: Walk) => {
      if (typeOk(v)) return run(v, walk);
      fail(walk, message);
      return v;
    };
  }
  return (v: unknown, walk: Walk) => {
    if (!typeOk(v)) {
      fail(walk, message);
      return v;
    }
    const out = run(v, walk);
    for (const rule of rules) {
      let ok = false;
      try {
        ok = rule.check(out, walk.cel);
      } catch (e) {
        // Not a verdict: the walk cannot go on until its owner has loaded the library.
        if (e instanceof CelNotLoaded) throw e;
        ok = false;
      }
      if (!ok) fail(walk, rule.message);
    }
    return out;
  };
}

function stringBody(schema: Extract<Schema, { t: "string" }>): Body {
  const { min, max, pattern } = schema;
  const allowed = schema.enum ? new Set(schema.enum) : undefined;
  const tooShort = `must be at least ${min} characters long`;
  const tooLong = `must be at most ${max} characters long`;
  return (s: string, walk: Walk) => {
    if (min !== undefined && s.length < min) fail(walk, tooShort);
    if (max !== undefined && s.length > max) fail(walk, tooLong);
    if (allowed && !allowed.has(s)) {
      fail(
        walk,
        `unsupported value ${JSON.stringify(s)}: must be one of ${schema.enum!.join(", ")}`,
      );
    }
    if (pattern && !pattern.test(s)) {
      fail(walk, `${JSON.stringify(s)} must match ${pattern.source}`);
    }
    return s;
  };
}

function intBody(schema: Extract<Schema, { t: "int" }>): Body {
  const { min, max } = schema;
  const allowed = schema.enum ? new Set(schema.enum) : undefined;
  return (n: number, walk: Walk) => {
    if (min !== undefined && n < min) fail(walk, `must be at least ${min}`);
    if (max !== undefined && n > max) fail(walk, `must be at most ${max}`);
    if (allowed && !allowed.has(n)) {
      fail(walk, `unsupported value ${n}: must be one of ${schema.enum!.join(", ")}`);
    }
    return n;
  };
}

function arrayBody(schema: Extract<Schema, { t: "array" }>, done: Compiled): Body {
  const { min, max } = schema;
  const item = checkerOf(schema.items, done);
  const keyOf = listKey(schema);
  return (list: unknown[], walk: Walk) => {
    if (min !== undefined && list.length < min) fail(walk, `must have at least ${min} item(s)`);
    if (max !== undefined && list.length > max) fail(walk, `must have at most ${max} items`);
    let out: unknown[] | undefined;
    for (let i = 0; i < list.length; i++) {
      const checked = below(walk, i, item, list[i]);
      if (out) out[i] = checked;
      else if (checked !== list[i]) (out = list.slice(0, i))[i] = checked;
    }
    const result = out ?? list;
    if (keyOf && result.length > 1) duplicates(walk, result, keyOf);
    return result;
  };
}

/**
 * How a set or map list's items are told apart (undefined: any list may repeat items): a
 * primitive item or a single key's value stands for itself, anything else by its JSON.
 */
function listKey(schema: Extract<Schema, { t: "array" }>): ((v: unknown) => unknown) | undefined {
  const json = (v: unknown) => typeof v === "object" && v !== null ? JSON.stringify(v) : v;
  if (schema.listType === "set") return json;
  const keys = schema.keys;
  if (schema.listType !== "map" || !keys) return undefined;
  if (keys.length === 1) {
    const [key] = keys;
    return (v) => json(isObject(v) ? v[key] : undefined);
  }
  return (v) => JSON.stringify(keys.map((k) => isObject(v) ? v[k] : undefined));
}

/** Reports every item whose key an earlier item has (the API server's "Duplicate value"). */
function duplicates(walk: Walk, list: unknown[], keyOf: (v: unknown) => unknown) {
  const seen = new Set<unknown>();
  for (let i = 0; i < list.length; i++) {
    const key = keyOf(list[i]);
    if (!seen.has(key)) {
      seen.add(key);
      continue;
    }
    walk.trail[walk.depth++] = i;
    fail(walk, `Duplicate value: ${JSON.stringify(key)}`);
    walk.depth--;
  }
}

function mapBody(schema: Extract<Schema, { t: "map" }>, done: Compiled): Body {
  const value = checkerOf(schema.values, done);
  const { maxProps } = schema;
  return (from: Record<string, unknown>, walk: Walk) => {
    if (maxProps !== undefined) tooManyProps(walk, from, maxProps);
    let out: Record<string, unknown> | undefined;
    for (const key in from) {
      const checked = below(walk, new MapKey(key), value, from[key]);
      if (out) out[key] = checked;
      else if (checked !== from[key]) (out = copyBefore(from, key))[key] = checked;
    }
    return out ?? from;
  };
}

/** A new object with the keys of `from` that come before `stop` (all of them if it is absent). */
function copyBefore(from: Record<string, unknown>, stop?: string) {
  const out: Record<string, unknown> = {};
  for (const key in from) {
    if (key === stop) break;
    out[key] = from[key];
  }
  return out;
}

/** One known property of an object node. */
interface Prop {
  check: Checker;
  /** The property's default, itself defaulted (and checked) once, here. */
  dflt: unknown;
}

/** A map or object with more than `max` properties. */
function tooManyProps(walk: Walk, from: Record<string, unknown>, max: number) {
  let n = 0;
  for (const _ in from) n++;
  if (n > max) fail(walk, `must have at most ${max} properties`);
}

function objectBody(schema: Extract<Schema, { t: "object" }>, done: Compiled): Body {
  const props = new Map<string, Prop>();
  const withDefaults: [string, unknown][] = [];
  for (const [key, sub] of Object.entries(schema.props)) {
    const check = checkerOf(sub, done);
    const dflt = sub.default === undefined ? undefined : defaultOf(sub, check);
    props.set(key, { check, dflt });
    if (dflt !== undefined) withDefaults.push([key, dflt]);
  }
  const required = schema.required ?? [];
  const open = schema.open === true;
  const { maxProps } = schema;
  return (from: Record<string, unknown>, walk: Walk) => {
    let out: Record<string, unknown> | undefined;
    const first = walk.errors.length;
    if (maxProps !== undefined) tooManyProps(walk, from, maxProps);
    for (const key in from) {
      const value = from[key], prop = props.get(key);
      let checked = value;
      if (!prop) {
        if (!open) fail(walk, `unknown field ${JSON.stringify(key)}`, key);
      } else if (value === undefined) {
        if (prop.dflt !== undefined && walk.defaults) checked = cloneData(prop.dflt);
      } else if (value !== null) {
        checked = below(walk, key, prop.check, value);
      }
      if (out) out[key] = checked;
      else if (checked !== value) (out = copyBefore(from, key))[key] = checked;
    }
    if (walk.defaults) {
      for (const [key, dflt] of withDefaults) {
        if (!Object.hasOwn(from, key)) (out ??= copyBefore(from))[key] = cloneData(dflt);
      }
    }
    const result = out ?? from;
    for (let i = required.length - 1; i >= 0; i--) {
      const key = required[i];
      if (result[key] === undefined || result[key] === null) {
        // Reported before anything found inside the object, as the API server orders them.
        walk.errors.splice(first, 0, {
          field: pathText(walk.trail, walk.depth, key),
          message: "required field is missing",
        });
      }
    }
    return result;
  };
}

/** A node's default, defaulted in turn; it must itself be valid (the schema is wrong if not). */
function defaultOf(schema: Schema, check: Checker): unknown {
  const walk: Walk = { errors: [], trail: [], depth: 0, defaults: true };
  const value = check(cloneData(schema.default), walk);
  if (walk.errors.length > 0) {
    throw new Error(`invalid schema default: ${JSON.stringify(walk.errors[0])}`);
  }
  return value;
}

/**
 * Defaults and validates a value in one pass: returns the defaulted value (sharing every subtree
 * without defaults with the input: treat both as read-only) and every problem. With `defaults`
 * false, only validates, and the value returned is the input. `cel` evaluates the rules that run
 * on the CEL library (without it, reaching one throws CelNotLoaded).
 */
export type SchemaChecker = (
  value: unknown,
  defaults?: boolean,
  cel?: CelEvaluator,
) => { value: unknown; errors: FieldError[] };

/**
 * Compiles `schema` into its checker, once (a node shared by several parents is compiled once; a
 * schema default that does not pass its own checks throws here).
 */
export function compileChecker(schema: Schema): SchemaChecker {
  const check = checkerOf(schema, new Map());
  return (value, defaults = true, cel) => {
    const walk: Walk = { errors: [], trail: [], depth: 0, defaults, cel };
    if (value === undefined) return { value, errors: walk.errors };
    return { value: check(value, walk), errors: walk.errors };
  };
}
