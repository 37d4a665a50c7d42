/**
 * CRD CEL rules evaluated by a maintained CEL implementation (@bufbuild/cel), with the Kubernetes
 * extensions the Gateway API CRDs call (the strings extension, `isIP`). Values are handed over as
 * the API server types them from the schema: objects and maps as CEL maps, integer fields as CEL
 * ints. A rule that errors while evaluating fails, as on the API server.
 * @module
 */
import { type CelEnv, celEnv, celFunc, type CelInput, CelScalar, parse, plan } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";
import { isIP } from "node:net";
import type { Schema } from "../structural_schema.ts";
import { isObject } from "../../../data/mod.ts";

/** A compiled rule: true when the rule holds for `self` (a plain JSON value of `schema`). */
export type CelCheck = (self: unknown) => boolean;

/** Kubernetes' `isIP(string)`: an IPv4 or IPv6 address (no zone, no leading zeros). */
const isIpFunc = celFunc("isIP", [CelScalar.STRING], CelScalar.BOOL, (s) => isIP(s) !== 0);

/** The CEL environment of CRD rules; one per compiler, which its owner keeps. */
export class CelCompiler {
  readonly #env: CelEnv = celEnv({ funcs: [...strings, isIpFunc] });

  /** Parses and plans `rule` (throws on a syntax error or an unknown function). */
  compile(rule: string, schema: Schema): CelCheck {
    const run = plan(this.#env, parse(rule));
    return (self) => {
      try {
        return run({ self: toCel(self, schema) } as never) === true;
      } catch {
        return false;
      }
    };
  }
}

const CEL_RESERVED = new Set([
  "true",
  "false",
  "null",
  "in",
  "as",
  "break",
  "const",
  "continue",
  "else",
  "for",
  "function",
  "if",
  "import",
  "let",
  "loop",
  "package",
  "namespace",
  "return",
  "var",
  "void",
  "while",
]);

/** A property name as Kubernetes CEL spells it (`namespace` is `__namespace__`, `-` `__dash__`…). */
export function celPropertyName(name: string): string {
  if (CEL_RESERVED.has(name)) return `__${name}__`;
  return name.replaceAll("__", "__underscores__").replaceAll(".", "__dot__")
    .replaceAll("-", "__dash__").replaceAll("/", "__slash__");
}

/** `value` (JSON) as the CEL value the API server makes of it under `schema`. */
export function toCel(value: unknown, schema: Schema | undefined): CelInput {
  if (value === null || value === undefined) return null;
  if (typeof value === "number") {
    const integer = schema?.t === "int" || schema?.t === "intOrString" ||
      ((schema === undefined || schema.t === "any") && Number.isInteger(value));
    return integer ? BigInt(value) : value;
  }
  if (Array.isArray(value)) {
    const items = schema?.t === "array" ? schema.items : undefined;
    return value.map((v) => toCel(v, items));
  }
  if (isObject(value)) {
    const out = new Map<string, CelInput>();
    for (const key in value) {
      const v = value[key];
      if (v === undefined) continue;
      if (schema?.t === "map") out.set(key, toCel(v, schema.values));
      else {
        const sub = schema?.t === "object" ? schema.props[key] : undefined;
        out.set(celPropertyName(key), toCel(v, sub));
      }
    }
    return out;
  }
  return value as CelInput;
}
