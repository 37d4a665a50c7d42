/**
 * A small structural-schema language (the subset of OpenAPI v3 the Gateway API CRDs use) with CEL
 * rules written as TypeScript predicates, and the two walks the API server does with a CRD schema:
 * defaulting and validation. schemas.ts describes each kind with it.
 * @module
 */

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

/** A string node. */
export const str = (o: Extra<"string"> = {}): Schema => ({ t: "string", ...o });
/** An integer node. */
export const int = (o: Extra<"int"> = {}): Schema => ({ t: "int", ...o });
/** A boolean node. */
export const bool = (): Schema => ({ t: "bool" });
/** An array node. */
export const arr = (items: Schema, o: Omit<Extra<"array">, "items"> = {}): Schema => ({
  t: "array",
  items,
  ...o,
});
/** An object node with known properties. */
export const obj = (
  props: Record<string, Schema>,
  o: Omit<Extra<"object">, "props"> = {},
): Schema => ({ t: "object", props, ...o });
/** A string-keyed map node. */
export const map = (values: Schema, o: Omit<Extra<"map">, "values"> = {}): Schema => ({
  t: "map",
  values,
  ...o,
});
/** Anything (fields aether neither uses nor checks deeply). */
export const any = (): Schema => ({ t: "any" });

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const clone = <T>(v: T): T => structuredClone(v);

/**
 * Returns `value` with schema defaults filled in, top-down, as the API server defaults a
 * structural schema (a defaulted object is itself defaulted). Never mutates its input.
 */
export function defaulted(schema: Schema, value: unknown): unknown {
  if (value === undefined) return value;
  if (schema.t === "object" && isObject(value)) {
    const out: Record<string, unknown> = { ...value };
    for (const [key, sub] of Object.entries(schema.props)) {
      let v = out[key];
      if (v === undefined && sub.default !== undefined) v = clone(sub.default);
      if (v !== undefined) out[key] = defaulted(sub, v);
    }
    return out;
  }
  if (schema.t === "array" && Array.isArray(value)) {
    return value.map((v) => defaulted(schema.items, v));
  }
  if (schema.t === "map" && isObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [k, defaulted(schema.values, v)]),
    );
  }
  return value;
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
  let typeOk = true;
  const fail = (message: string, at = path) => errors.push({ field: at, message });
  const wrongType = (message: string) => {
    typeOk = false;
    fail(message);
  };
  switch (schema.t) {
    case "any":
      break;
    case "string":
      if (typeof value !== "string") {
        wrongType(`must be a string`);
        break;
      }
      if (schema.min !== undefined && value.length < schema.min) {
        fail(`must be at least ${schema.min} characters long`);
      }
      if (schema.max !== undefined && value.length > schema.max) {
        fail(`must be at most ${schema.max} characters long`);
      }
      if (schema.enum && !schema.enum.includes(value)) {
        fail(
          `unsupported value ${JSON.stringify(value)}: must be one of ${schema.enum.join(", ")}`,
        );
      }
      if (schema.pattern && !schema.pattern.test(value)) {
        fail(`${JSON.stringify(value)} must match ${schema.pattern.source}`);
      }
      break;
    case "int":
      if (typeof value !== "number" || !Number.isInteger(value)) {
        wrongType(`must be an integer`);
        break;
      }
      if (schema.min !== undefined && value < schema.min) fail(`must be at least ${schema.min}`);
      if (schema.max !== undefined && value > schema.max) fail(`must be at most ${schema.max}`);
      if (schema.enum && !schema.enum.includes(value)) {
        fail(`unsupported value ${value}: must be one of ${schema.enum.join(", ")}`);
      }
      break;
    case "bool":
      if (typeof value !== "boolean") wrongType(`must be a boolean`);
      break;
    case "array":
      if (!Array.isArray(value)) {
        wrongType(`must be a list`);
        break;
      }
      if (schema.min !== undefined && value.length < schema.min) {
        fail(`must have at least ${schema.min} item(s)`);
      }
      if (schema.max !== undefined && value.length > schema.max) {
        fail(`must have at most ${schema.max} items`);
      }
      value.forEach((v, i) => errors.push(...validateSchema(schema.items, v, `${path}[${i}]`)));
      break;
    case "map":
      if (!isObject(value)) {
        wrongType(`must be an object`);
        break;
      }
      for (const [k, v] of Object.entries(value)) {
        errors.push(...validateSchema(schema.values, v, `${path}[${JSON.stringify(k)}]`));
      }
      break;
    case "object":
      if (!isObject(value)) {
        wrongType(`must be an object`);
        break;
      }
      for (const key of schema.required ?? []) {
        if (value[key] === undefined || value[key] === null) {
          fail(`required field is missing`, join(path, key));
        }
      }
      for (const [key, v] of Object.entries(value)) {
        const sub = schema.props[key];
        if (sub) {
          if (v !== undefined && v !== null) {
            errors.push(...validateSchema(sub, v, join(path, key)));
          }
        } else if (!schema.open) fail(`unknown field ${JSON.stringify(key)}`, join(path, key));
      }
      break;
  }
  if (typeOk) {
    for (const rule of schema.rules ?? []) {
      let ok = false;
      try {
        ok = rule.check(value);
      } catch {
        ok = false;
      }
      if (!ok) fail(rule.message);
    }
  }
  return errors;
}
