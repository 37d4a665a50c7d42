/**
 * A small structural-schema language (the subset of OpenAPI v3 the Gateway API CRDs use) with CEL
 * rules written as TypeScript predicates, and the two walks the API server does with a CRD schema:
 * defaulting and validation. schemas.ts describes each kind with it.
 * @module
 */
import { cloneData, isObject } from "./clone.ts";

/** A CEL rule (x-kubernetes-validations) on a schema node: `check(self)` must hold. */
export interface Rule {
  message: string;
  // deno-lint-ignore no-explicit-any
  check: (self: any) => boolean;
}

interface Common {
  default?: unknown;
  rules?: Rule[];
}

/** One schema node. */
export type Schema =
  | Common & {
    t: "string";
    min?: number;
    max?: number;
    pattern?: RegExp;
    enum?: readonly string[];
  }
  | Common & { t: "int"; min?: number; max?: number; enum?: readonly number[] }
  | Common & { t: "bool" }
  | Common & { t: "array"; items: Schema; min?: number; max?: number }
  | Common & {
    t: "object";
    props: Record<string, Schema>;
    required?: readonly string[];
    /** Unknown fields are kept without a problem (core kinds we only partly describe). */
    open?: boolean;
  }
  | Common & { t: "map"; values: Schema }
  | Common & { t: "any" };

type Extra<T extends Schema["t"]> = Omit<Extract<Schema, { t: T }>, "t">;

/** All fields any node may have: every node gets each of them, so walks see one object shape. */
const BLANK = {
  t: undefined,
  default: undefined,
  rules: undefined,
  min: undefined,
  max: undefined,
  pattern: undefined,
  enum: undefined,
  items: undefined,
  props: undefined,
  required: undefined,
  open: undefined,
  values: undefined,
};

const node = <T extends Schema>(fields: T): Schema => ({ ...BLANK, ...fields }) as Schema;

/** A string node. */
export const str = (o: Extra<"string"> = {}): Schema => node({ t: "string", ...o });
/** An integer node. */
export const int = (o: Extra<"int"> = {}): Schema => node({ t: "int", ...o });
/** A boolean node. */
export const bool = (): Schema => node({ t: "bool" });
/** An array node. */
export const arr = (items: Schema, o: Omit<Extra<"array">, "items"> = {}): Schema =>
  node({ t: "array", items, ...o });
/** An object node with known properties. */
export const obj = (
  props: Record<string, Schema>,
  o: Omit<Extra<"object">, "props"> = {},
): Schema => node({ t: "object", props, ...o });
/** A string-keyed map node. */
export const map = (values: Schema, o: Omit<Extra<"map">, "values"> = {}): Schema =>
  node({ t: "map", values, ...o });
/** Anything (fields aether neither uses nor checks deeply). */
export const any = (): Schema => node({ t: "any" });

/** Per object node: its properties that carry a default, in declaration order. */
const defaultedProps = new WeakMap<Schema, [string, Schema][]>();

function propsWithDefaults(schema: Extract<Schema, { t: "object" }>): [string, Schema][] {
  let list = defaultedProps.get(schema);
  if (!list) {
    list = Object.entries(schema.props).filter(([, sub]) => sub.default !== undefined);
    defaultedProps.set(schema, list);
  }
  return list;
}

/**
 * Returns a deep copy of `value` with schema defaults filled in, top-down, as the API server
 * defaults a structural schema (a defaulted object is itself defaulted). Never mutates its input
 * and shares nothing with it.
 */
export function defaulted(schema: Schema, value: unknown): unknown {
  if (value === undefined) return value;
  if (schema.t === "object" && isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) {
      const v = value[key], sub = schema.props[key];
      if (!sub) out[key] = cloneData(v);
      else if (v !== undefined) out[key] = defaulted(sub, v);
      else out[key] = sub.default !== undefined ? defaulted(sub, cloneData(sub.default)) : v;
    }
    for (const [key, sub] of propsWithDefaults(schema)) {
      if (!Object.hasOwn(value, key)) out[key] = defaulted(sub, cloneData(sub.default));
    }
    return out;
  }
  if (schema.t === "array" && Array.isArray(value)) {
    return value.map((v) => defaulted(schema.items, v));
  }
  if (schema.t === "map" && isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value)) out[key] = defaulted(schema.values, value[key]);
    return out;
  }
  return cloneData(value);
}

/** A validation finding: field path and message. */
export interface FieldError {
  field: string;
  message: string;
}

const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/**
 * Checks `value` against `schema`: types, required fields, enums, bounds, patterns, unknown
 * fields (as strict field validation does) and the node's CEL rules (skipped when the node has
 * the wrong type).
 */
export function validateSchema(schema: Schema, value: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  check(schema, value, path, errors);
  return errors;
}

/** validateSchema's walk, appending to one list. */
function check(schema: Schema, value: unknown, path: string, errors: FieldError[]) {
  let typeOk = true;
  switch (schema.t) {
    case "any":
      break;
    case "string":
      if (typeof value !== "string") {
        typeOk = false;
        errors.push({ field: path, message: `must be a string` });
        break;
      }
      if (schema.min !== undefined && value.length < schema.min) {
        errors.push({ field: path, message: `must be at least ${schema.min} characters long` });
      }
      if (schema.max !== undefined && value.length > schema.max) {
        errors.push({ field: path, message: `must be at most ${schema.max} characters long` });
      }
      if (schema.enum && !schema.enum.includes(value)) {
        errors.push({
          field: path,
          message: `unsupported value ${JSON.stringify(value)}: must be one of ${
            schema.enum.join(", ")
          }`,
        });
      }
      if (schema.pattern && !schema.pattern.test(value)) {
        errors.push({
          field: path,
          message: `${JSON.stringify(value)} must match ${schema.pattern.source}`,
        });
      }
      break;
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) {
        typeOk = false;
        errors.push({ field: path, message: `must be an integer` });
        break;
      }
      if (schema.min !== undefined && value < schema.min) {
        errors.push({ field: path, message: `must be at least ${schema.min}` });
      }
      if (schema.max !== undefined && value > schema.max) {
        errors.push({ field: path, message: `must be at most ${schema.max}` });
      }
      if (schema.enum && !schema.enum.includes(value)) {
        errors.push({
          field: path,
          message: `unsupported value ${value}: must be one of ${schema.enum.join(", ")}`,
        });
      }
      break;
    case "bool":
      if (typeof value !== "boolean") {
        typeOk = false;
        errors.push({ field: path, message: `must be a boolean` });
      }
      break;
    case "array":
      if (!Array.isArray(value)) {
        typeOk = false;
        errors.push({ field: path, message: `must be a list` });
        break;
      }
      if (schema.min !== undefined && value.length < schema.min) {
        errors.push({ field: path, message: `must have at least ${schema.min} item(s)` });
      }
      if (schema.max !== undefined && value.length > schema.max) {
        errors.push({ field: path, message: `must have at most ${schema.max} items` });
      }
      for (let i = 0; i < value.length; i++) check(schema.items, value[i], `${path}[${i}]`, errors);
      break;
    case "map":
      if (!isObject(value)) {
        typeOk = false;
        errors.push({ field: path, message: `must be an object` });
        break;
      }
      for (const k in value) {
        if (Object.hasOwn(value, k)) {
          check(schema.values, value[k], `${path}[${JSON.stringify(k)}]`, errors);
        }
      }
      break;
    case "object":
      if (!isObject(value)) {
        typeOk = false;
        errors.push({ field: path, message: `must be an object` });
        break;
      }
      for (const key of schema.required ?? []) {
        if (value[key] === undefined || value[key] === null) {
          errors.push({ field: join(path, key), message: `required field is missing` });
        }
      }
      for (const key in value) {
        if (!Object.hasOwn(value, key)) continue;
        const v = value[key], sub = schema.props[key];
        if (sub) {
          if (v !== undefined && v !== null) check(sub, v, join(path, key), errors);
        } else if (!schema.open) {
          errors.push({ field: join(path, key), message: `unknown field ${JSON.stringify(key)}` });
        }
      }
      break;
  }
  if (typeOk && schema.rules) {
    for (const rule of schema.rules) {
      let ok = false;
      try {
        ok = rule.check(value);
      } catch {
        ok = false;
      }
      if (!ok) errors.push({ field: path, message: rule.message });
    }
  }
}
