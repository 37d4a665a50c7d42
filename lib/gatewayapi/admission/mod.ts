/**
 * Admission as the API server does it, without resolve: CRD defaults, structural-schema validation and CEL rules from the vendored CRDs (a webhook imports this face alone).
 * @module
 */
export { type CrdFacts, type CrdKind, type CrdNode, type CrdRule } from "./crd/facts.ts";
export { CelNotLoaded, CelRules } from "./cel/rules.ts";
export { admitObject, applyDefaults, validateObject } from "./validate.ts";
export { type AdmissionKinds, admissionKinds } from "./kinds.ts";
export { admit, type Admitted } from "./admit.ts";
export { FACTS } from "./crd/facts.gen.ts";
export { type Schema } from "./structural_schema.ts";
