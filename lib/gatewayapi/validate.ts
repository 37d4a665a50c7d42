/**
 * CRD defaulting and validation of one object, as the API server would do on create: defaults
 * from the schema, then schema + CEL rules, each problem naming the object and field.
 * @module
 */
import { cloneData } from "./clone.ts";
import { defaulted, validateSchema } from "./schema.ts";
import { KINDS } from "./schemas.ts";
import type { KubeObject, Problem } from "./types.ts";

const NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const TOP_LEVEL = new Set(["apiVersion", "kind", "metadata", "status"]);

/** Strips the top-level envelope, keeping the body the kind's schema describes. */
function bodyOf(obj: KubeObject): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const key of Object.keys(obj)) {
    if (!TOP_LEVEL.has(key)) body[key] = (obj as Record<string, unknown>)[key];
  }
  return body;
}

/**
 * Returns a new object with the CRD defaults applied as the API server applies them (e.g. path
 * match PathPrefix "/", backendRef weight 1, parentRef group/kind), plus `metadata.namespace`
 * "default" for namespaced kinds without one. Unknown kinds are returned as a copy.
 */
export function applyDefaults(obj: KubeObject): KubeObject {
  const info = KINDS[obj?.kind];
  if (!info || typeof obj !== "object" || obj === null) return structuredClone(obj);
  const copy: KubeObject = { ...obj };
  for (const key of TOP_LEVEL) {
    if (Object.hasOwn(copy, key)) (copy as Record<string, unknown>)[key] = cloneData(copy[key]);
  }
  if (
    info.namespaced && copy.metadata && typeof copy.metadata === "object" &&
    !copy.metadata.namespace
  ) {
    copy.metadata = { ...copy.metadata, namespace: "default" };
  }
  // defaulted copies the body deeply, so the result shares nothing with `obj`.
  const body = defaulted(info.body, bodyOf(copy)) as Record<string, unknown>;
  return { ...copy, ...body };
}

/**
 * Validates one object against the v1.5.1 standard-channel CRD schema and CEL rules (core kinds:
 * the fields aether uses). Returns every problem; empty when the API server would accept it.
 * Call it on a defaulted object (resolve does), as the API server validates after defaulting.
 */
export function validateObject(obj: KubeObject): Problem[] {
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
  const info = KINDS[kind];
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
  for (const e of validateSchema(info.body, bodyOf(obj), "")) {
    problems.push(problem(e.field, e.message));
  }
  return problems;
}
