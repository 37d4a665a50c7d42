/**
 * A small structural-schema language (the subset of OpenAPI v3 the Gateway API CRDs use) with CEL
 * rules written as TypeScript predicates. schemas.ts describes each kind with it; schema_check.ts
 * compiles a schema into the API server's defaulting and validation walk.
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
