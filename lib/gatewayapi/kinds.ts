/**
 * The kinds aether admits, each with its API versions, scope and compiled schema checker: the
 * Gateway API kinds from the vendored v1.5.1 CRDs (experimental channel, a superset of standard:
 * experimental fields such as HTTPRoute `retry` are accepted), and the parts of core kinds aether
 * uses. Built once at module load; the table is immutable afterwards.
 * @module
 */
import { CelCompiler } from "./cel_library.ts";
import { HAND_PREDICATES } from "./cel_predicates.ts";
import { compileChecker, type SchemaChecker } from "./compile_checker.ts";
import { FACTS } from "./crd_facts.gen.ts";
import { buildCrdSchemas } from "./crd_schema.ts";
import { CORE_KINDS } from "./core_schemas.ts";
import type { Schema } from "./structural_schema.ts";

/** The Gateway API kinds aether reads (a new route kind adds its name here). */
export const GATEWAY_KINDS = [
  "GatewayClass",
  "Gateway",
  "HTTPRoute",
  "GRPCRoute",
  "ReferenceGrant",
];

/** What one supported kind looks like: its API versions, whether namespaced, and its schema. */
export interface KindInfo {
  apiVersions: readonly string[];
  namespaced: boolean;
  /** Schema of the top-level body (fields other than apiVersion, kind, metadata, status). */
  body: Schema;
  /** `body`'s defaulting and validation walk. */
  check: SchemaChecker;
}

function buildKinds(): Readonly<Record<string, KindInfo>> {
  const crds = buildCrdSchemas(FACTS, GATEWAY_KINDS, HAND_PREDICATES, new CelCompiler());
  const kinds: Record<string, KindInfo> = {};
  for (const [name, k] of [...Object.entries(crds), ...Object.entries(CORE_KINDS)]) {
    kinds[name] = { ...k, check: compileChecker(k.body) };
  }
  return Object.freeze(kinds);
}

/** The kinds aether reads, by kind name. */
export const KINDS: Readonly<Record<string, KindInfo>> = buildKinds();
