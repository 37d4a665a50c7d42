/**
 * The kinds aether admits, each with its API versions, scope and compiled schema checker: the
 * Gateway API kinds from the vendored v1.5.1 CRDs (experimental channel, a superset of standard:
 * experimental fields such as HTTPRoute `retry` are accepted), and the parts of core kinds aether
 * uses. Built once at module load; the table is immutable afterwards.
 * @module
 */
import { HAND_PREDICATES } from "./cel/predicates.ts";
import { compileChecker, type SchemaChecker } from "./compile_checker.ts";
import { FACTS } from "./crd/facts.gen.ts";
import { buildCrdSchemas } from "./crd/schema.ts";
import { CORE_KINDS } from "./core_schemas.ts";
import type { Schema } from "./structural_schema.ts";

/** The Gateway API kinds aether reads (a new route kind adds its name here). */
export const GATEWAY_KINDS = [
  "GatewayClass",
  "Gateway",
  "HTTPRoute",
  "GRPCRoute",
  "ReferenceGrant",
  "TLSRoute",
  "TCPRoute",
  "UDPRoute",
];

/** What one supported kind looks like: its API versions, whether namespaced, and its schema. */
export interface KindInfo {
  apiVersions: readonly string[];
  namespaced: boolean;
  /** Schema of the top-level body (fields other than apiVersion, kind, metadata, status). */
  body: Schema;
  /** The body's defaulting and validation walk, per apiVersion. */
  checks: Readonly<Record<string, SchemaChecker>>;
}

function buildKinds(): Readonly<Record<string, KindInfo>> {
  const crds = buildCrdSchemas(FACTS, GATEWAY_KINDS, HAND_PREDICATES);
  const kinds: Record<string, KindInfo> = {};
  for (const [name, k] of Object.entries(crds)) {
    const compiled = new Map<Schema, SchemaChecker>();
    const checks: Record<string, SchemaChecker> = {};
    for (const [v, body] of Object.entries(k.bodies)) {
      if (!compiled.has(body)) compiled.set(body, compileChecker(body));
      checks[v] = compiled.get(body)!;
    }
    kinds[name] = { ...k, body: k.bodies[k.apiVersions[0]], checks };
  }
  for (const [name, k] of Object.entries(CORE_KINDS)) {
    const check = compileChecker(k.body);
    kinds[name] = { ...k, checks: Object.fromEntries(k.apiVersions.map((v) => [v, check])) };
  }
  return Object.freeze(kinds);
}

/** The checker of `info`'s objects of `apiVersion` (of its first version when not served). */
export function checkerFor(info: KindInfo, apiVersion: unknown): SchemaChecker {
  return (typeof apiVersion === "string" && Object.hasOwn(info.checks, apiVersion))
    ? info.checks[apiVersion]
    : info.checks[info.apiVersions[0]];
}

/** The kinds aether reads, by kind name. */
export const KINDS: Readonly<Record<string, KindInfo>> = buildKinds();
