/**
 * The structural-schema language: the subset of OpenAPI v3 the Gateway API CRDs use, with CEL
 * rules as `check(self, cel)` functions (`cel` evaluates the rules that run on the CEL library). admission/crd/schema.ts builds the Gateway API kinds' schemas from the
 * generated CRD facts, core_schemas.ts describes the parts of core kinds aether reads, and
 * compile_checker.ts compiles a schema into the API server's defaulting and validation walk.
 * @module
 */

/** A CRD rule run by the CEL library: its text and the schema node it sits on. */
export interface CelRule {
  readonly rule: string;
  readonly schema: Schema;
}

/** Evaluates CEL rules; the walk's owner passes one in (admission/cel/rules.ts: CelRules). */
export interface CelEvaluator {
  /** Whether `rule` holds for `self` (throws CelNotLoaded before the library is loaded). */
  check(rule: CelRule, self: unknown): boolean;
}

/**
 * A rule on a schema node (a CRD's x-kubernetes-validations entry): `check(self, cel)` must hold.
 * A hand-written predicate ignores `cel`; a rule without one hands itself to `cel`.
 */
export interface Rule {
  message: string;
  // deno-lint-ignore no-explicit-any
  check: (self: any, cel?: CelEvaluator) => boolean;
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
  | Common & {
    t: "array";
    items: Schema;
    min?: number;
    max?: number;
    /** `x-kubernetes-list-type`: set (items unique) or map (unique by `keys`). */
    listType?: "set" | "map";
    keys?: readonly string[];
  }
  | Common & {
    t: "object";
    props: Record<string, Schema>;
    required?: readonly string[];
    /** Unknown fields are kept without a problem (preserve-unknown-fields, or a core kind). */
    open?: boolean;
    maxProps?: number;
  }
  | Common & { t: "map"; values: Schema; maxProps?: number }
  | Common & { t: "intOrString" }
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
  listType: undefined,
  keys: undefined,
  props: undefined,
  required: undefined,
  open: undefined,
  maxProps: undefined,
  values: undefined,
};

const node = <T extends Schema>(fields: T): Schema => ({ ...BLANK, ...fields }) as Schema;

/** A string node. */
export const str = (o: Extra<"string"> = {}): Schema => node({ t: "string", ...o });
/** An integer node. */
export const int = (o: Extra<"int"> = {}): Schema => node({ t: "int", ...o });
/** A boolean node. */
export const bool = (o: Extra<"bool"> = {}): Schema => node({ t: "bool", ...o });
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
/** An integer or a string (`x-kubernetes-int-or-string`). */
export const intOrString = (o: Extra<"intOrString"> = {}): Schema =>
  node({ t: "intOrString", ...o });
/** Anything (preserve-unknown-fields, or fields of core kinds aether does not check). */
export const any = (o: Extra<"any"> = {}): Schema => node({ t: "any", ...o });
