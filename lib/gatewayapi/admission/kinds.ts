/**
 * The admission table: for each kind a caller admits, its API versions, scope and compiled schema
 * checker. The caller names the kinds (aether's are catalogue/mod.ts `readKinds` of the route
 * registry, compiled once in lib/gatewayapi/read_kinds.ts): admission itself knows no route kind
 * and imports no conversion code. A Gateway API kind's schema comes from the vendored v1.5.1 CRDs
 * (experimental channel, a superset of standard: experimental fields such as HTTPRoute `retry`
 * are accepted), a core kind's from core_schemas.ts (the parts aether uses); a kind of the caller's
 * own catalogue with neither (a test's invented kind) is checked by its envelope only (apiVersion,
 * metadata; the namespace defaulted). A table is immutable once built.
 * @module
 */
import { HAND_PREDICATES } from "./cel/predicates.ts";
import { compileChecker, type SchemaChecker } from "./compile_checker.ts";
import { FACTS } from "./crd/facts.gen.ts";
import { buildCrdSchemas } from "./crd/schema.ts";
import { CORE_SCHEMAS } from "./core_schemas.ts";
import { obj, type Schema } from "./structural_schema.ts";
import { CATALOGUE, type CatalogueKind, catalogueKind } from "../catalogue/mod.ts";

/** What one admitted kind looks like: its API versions, whether namespaced, and its schema. */
export interface KindInfo {
  apiVersions: readonly string[];
  namespaced: boolean;
  /** Schema of the top-level body (fields other than apiVersion, kind, metadata, status). */
  body: Schema;
  /** The body's defaulting and validation walk, per apiVersion. */
  checks: Readonly<Record<string, SchemaChecker>>;
  /**
   * The body schema keeps unknown fields and says nothing of the envelope (apiVersion, kind,
   * metadata, status: no property, rule or property count of it could see them), so walking
   * the whole object is walking its body: admission then copies no body out and back.
   */
  envelopeBlind?: boolean;
}

/** The top-level keys that are not part of a kind's body schema. */
export const ENVELOPE: ReadonlySet<string> = new Set(["apiVersion", "kind", "metadata", "status"]);

/** Whether `body` is {@link KindInfo.envelopeBlind}. */
function envelopeBlind(body: Schema): boolean {
  return body.t === "object" && body.open === true && (body.rules ?? []).length === 0 &&
    body.maxProps === undefined && body.default === undefined &&
    !Object.keys(body.props).some((k) => ENVELOPE.has(k)) &&
    !(body.required ?? []).some((k) => ENVELOPE.has(k));
}

/** The kinds a caller admits, by kind name. */
export type AdmissionKinds = Readonly<Record<string, KindInfo>>;

/**
 * Builds the admission table of `kinds`, each an entry of `catalogue`. Compiles every schema now
 * (a few ms for aether's kinds). Throws on a kind the catalogue does not hold, and when a hand
 * predicate matches no CRD rule of the kinds (so `kinds` holds every Gateway API kind aether
 * reads, as `readKinds` gives them).
 */
export function admissionKinds(
  kinds: readonly string[],
  catalogue: readonly CatalogueKind[] = CATALOGUE,
): AdmissionKinds {
  const entries = kinds.map((k) => catalogueKind(k, catalogue));
  const crd = entries.filter((e) => Object.hasOwn(FACTS.kinds, e.kind)).map((e) => e.kind);
  const crds = buildCrdSchemas(FACTS, crd, HAND_PREDICATES);
  const table: Record<string, KindInfo> = {};
  for (const [name, k] of Object.entries(crds)) {
    const compiled = new Map<Schema, SchemaChecker>();
    const checks: Record<string, SchemaChecker> = {};
    for (const [v, body] of Object.entries(k.bodies)) {
      if (!compiled.has(body)) compiled.set(body, compileChecker(body));
      checks[v] = compiled.get(body)!;
    }
    table[name] = { ...k, body: k.bodies[k.apiVersions[0]], checks };
  }
  for (const e of entries) {
    if (Object.hasOwn(table, e.kind)) continue;
    const body = Object.hasOwn(CORE_SCHEMAS, e.kind)
      ? CORE_SCHEMAS[e.kind]
      : obj({}, { open: true });
    const check = compileChecker(body);
    const apiVersions = e.versions.map((v) => (e.group ? `${e.group}/${v}` : v));
    table[e.kind] = {
      apiVersions,
      namespaced: e.namespaced,
      body,
      checks: Object.fromEntries(apiVersions.map((v) => [v, check])),
      ...(envelopeBlind(body) ? { envelopeBlind: true } : {}),
    };
  }
  return Object.freeze(table);
}

/** The checker of `info`'s objects of `apiVersion` (of its first version when not served). */
export function checkerFor(info: KindInfo, apiVersion: unknown): SchemaChecker {
  return (typeof apiVersion === "string" && Object.hasOwn(info.checks, apiVersion))
    ? info.checks[apiVersion]
    : info.checks[info.apiVersions[0]];
}
