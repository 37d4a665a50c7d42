/**
 * The shape of the structural-schema facts tools/gen_crds.ts extracts from the vendored Gateway API
 * CRD YAML (tools/gateway-api/): one flat table of schema nodes (identical subtrees stored once,
 * children by index) and, per kind, the root node of each served version's body. Pure data: no
 * descriptions, only what the API server's defaulting and validation use.
 * @module
 */

/** A CEL rule (`x-kubernetes-validations` entry) of a schema node. */
export interface CrdRule {
  rule: string;
  /** The rule's message, or the API server's `failed rule: <rule>` when the CRD gives none. */
  message: string;
  /** The rule reads `oldSelf`: a transition rule, which the API server skips on create. */
  transition?: true;
}

/** One schema node (OpenAPI v3 subset used by the CRDs); children are indexes into `nodes`. */
export interface CrdNode {
  type?: "string" | "integer" | "number" | "boolean" | "array" | "object";
  format?: string;
  enum?: readonly (string | number)[];
  default?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minimum?: number;
  maximum?: number;
  minItems?: number;
  maxItems?: number;
  minProperties?: number;
  maxProperties?: number;
  required?: readonly string[];
  properties?: Readonly<Record<string, number>>;
  additionalProperties?: number;
  items?: number;
  listType?: "atomic" | "set" | "map";
  listMapKeys?: readonly string[];
  intOrString?: true;
  preserveUnknownFields?: true;
  /** Value constraints (no type of their own), as in a Gateway address's IP check. */
  oneOf?: readonly number[];
  anyOf?: readonly number[];
  not?: number;
  rules?: readonly CrdRule[];
}

/** One CRD: its kind, group, scope and the body schema (index) per served version. */
export interface CrdKind {
  group: string;
  namespaced: boolean;
  /** Served versions, in the CRD's order, each the root node of its body (spec etc.). */
  versions: Readonly<Record<string, number>>;
}

/** What the generator writes: where the facts came from, the nodes and the kinds. */
export interface CrdFacts {
  bundleVersion: string;
  channel: string;
  nodes: readonly CrdNode[];
  kinds: Readonly<Record<string, CrdKind>>;
}
