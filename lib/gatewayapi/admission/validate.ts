/**
 * CRD defaulting and validation of one object, as the API server would do on create: defaults
 * from the schema, then schema + CEL rules, each problem naming the object and field. admitObject
 * does both in one walk; applyDefaults and validateObject are the two halves. Each takes the
 * caller's admission table (admission/kinds.ts: the kinds it admits) and its CEL evaluator (a
 * loaded CelRules, admission/cel/rules.ts) for the rules that run on the CEL library; without
 * one, an object reaching such a rule throws CelNotLoaded.
 * @module
 */
import type { FieldError } from "./compile_checker.ts";
import { type AdmissionKinds, checkerFor, ENVELOPE, type KindInfo } from "./kinds.ts";
import type { CelEvaluator } from "./structural_schema.ts";
import type { KubeObject, Problem } from "../types.ts";

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/** Strips the top-level envelope, keeping the body the kind's schema describes. */
function bodyOf(obj: KubeObject): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key in obj) {
    if (Object.hasOwn(obj, key) && !ENVELOPE.has(key)) {
      body[key] = (obj as Record<string, unknown>)[key];
    }
  }
  return body;
}

/**
 * A known kind's object with its defaults (`obj` itself when none applies), and what is wrong
 * with its body.
 */
function defaultedWithErrors(
  obj: KubeObject,
  info: KindInfo,
  cel: CelEvaluator | undefined,
): { obj: KubeObject; errors: FieldError[] } {
  const meta = obj.metadata;
  const namespaced = info.namespaced && typeof meta === "object" && meta !== null &&
    !meta.namespace;
  if (info.envelopeBlind) {
    // The walk passes the envelope by (an unknown field of an open schema): no body copy.
    const checked = checkerFor(info, obj.apiVersion)(obj, true, cel);
    if (!namespaced) return { obj: checked.value as KubeObject, errors: checked.errors };
    const out = { ...checked.value as KubeObject };
    out.metadata = { ...meta, namespace: "default" };
    return { obj: out, errors: checked.errors };
  }
  const body = bodyOf(obj);
  const checked = checkerFor(info, obj.apiVersion)(body, true, cel);
  if (!namespaced && checked.value === body) return { obj, errors: checked.errors };
  const out: KubeObject = { ...obj, ...checked.value as Record<string, unknown> };
  if (namespaced) out.metadata = { ...meta, namespace: "default" };
  return { obj: out, errors: checked.errors };
}

/**
 * Returns the object with the CRD defaults applied as the API server applies them (e.g. path
 * match PathPrefix "/", backendRef weight 1, parentRef group/kind), plus `metadata.namespace`
 * "default" for namespaced kinds without one. Objects of a kind not in `kinds` are returned as a
 * copy. The result shares every part without a default with `obj` (is `obj` when nothing is
 * defaulted): treat both as read-only.
 */
export function applyDefaults(
  obj: KubeObject,
  kinds: AdmissionKinds,
  cel?: CelEvaluator,
): KubeObject {
  const info = infoOf(kinds, obj?.kind);
  if (!info || typeof obj !== "object" || obj === null) return structuredClone(obj);
  return defaultedWithErrors(obj, info, cel).obj;
}

/** The table's entry of `kind`, if it has one. */
const infoOf = (kinds: AdmissionKinds, kind: unknown): KindInfo | undefined =>
  typeof kind === "string" && Object.hasOwn(kinds, kind) ? kinds[kind] : undefined;

/** Whether `obj` is of a kind and apiVersion of `kinds` (its schema is known). */
export function isServedKind(obj: KubeObject, kinds: AdmissionKinds): boolean {
  return infoOf(kinds, obj.kind)?.apiVersions.includes(obj.apiVersion) === true;
}

/**
 * applyDefaults and validateObject in one walk: the defaulted copy, or every problem of it.
 */
export function admitObject(
  raw: KubeObject,
  kinds: AdmissionKinds,
  cel?: CelEvaluator,
): { obj: KubeObject; problems: Problem[] } {
  const info = infoOf(kinds, raw?.kind);
  if (!info || typeof raw !== "object" || raw === null) {
    const obj = applyDefaults(raw, kinds, cel);
    return { obj, problems: validateObject(obj, kinds, cel) };
  }
  const { obj, errors } = defaultedWithErrors(raw, info, cel);
  return { obj, problems: objectProblems(obj, kinds, cel, errors) };
}

/**
 * Validates one object against the vendored v1.5.1 CRD schema and CEL rules (core kinds:
 * the fields aether uses). Returns every problem; empty when the API server would accept it.
 * Call it on a defaulted object (resolve does), as the API server validates after defaulting.
 */
export function validateObject(
  obj: KubeObject,
  kinds: AdmissionKinds,
  cel?: CelEvaluator,
): Problem[] {
  return objectProblems(obj, kinds, cel);
}

/** validateObject, with the body's findings given when they are known already. */
function objectProblems(
  obj: KubeObject,
  kinds: AdmissionKinds,
  cel: CelEvaluator | undefined,
  bodyErrors?: FieldError[],
): Problem[] {
  const kind = typeof obj?.kind === "string" ? obj.kind : "";
  const meta = (obj?.metadata ?? {}) as KubeObject["metadata"];
  const name = typeof meta.name === "string" ? meta.name : "";
  const namespace = typeof meta.namespace === "string" ? meta.namespace : undefined;
  const problem = (field: string, message: string): Problem => ({
    kind: kind || "(no kind)",
    ...(namespace !== undefined ? { namespace } : {}),
    name,
    field,
    message,
  });
  const info = infoOf(kinds, kind);
  if (!info) {
    return [problem("kind", kind ? `unsupported kind ${JSON.stringify(kind)}` : "kind is missing")];
  }
  const problems: Problem[] = [];
  if (!info.apiVersions.includes(obj.apiVersion)) {
    problems.push(
      problem(
        "apiVersion",
        `unsupported apiVersion ${JSON.stringify(obj.apiVersion)} for ${kind}: use ${
          info.apiVersions.join(" or ")
        }`,
      ),
    );
  }
  if (typeof obj.metadata !== "object" || obj.metadata === null) {
    return [...problems, problem("metadata", "metadata is missing")];
  }
  if (!name) problems.push(problem("metadata.name", "required field is missing"));
  else if (name.length > 253 || !NAME.test(name)) {
    problems.push(
      problem("metadata.name", `${JSON.stringify(name)} must be a lowercase RFC 1123 subdomain`),
    );
  }
  if (
    info.namespaced && namespace !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(namespace)
  ) {
    problems.push(
      problem(
        "metadata.namespace",
        `${JSON.stringify(namespace)} must be a lowercase RFC 1123 label`,
      ),
    );
  }
  for (const e of bodyErrors ?? checkerFor(info, obj.apiVersion)(bodyOf(obj), false, cel).errors) {
    problems.push(problem(e.field, e.message));
  }
  return problems;
}
