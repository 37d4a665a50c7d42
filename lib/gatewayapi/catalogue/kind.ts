/**
 * The shape of one entry of the kind catalogue (catalogue/mod.ts): where a kind lives in the
 * Kubernetes API. tools/gen_crds.ts writes the CRD kinds' entries (kinds.gen.ts); the core kinds
 * aether reads are listed by hand in mod.ts, in the same shape.
 * @module
 */

/** One kind: its group, served versions, storage version, plural and scope. */
export interface CatalogueKind {
  readonly kind: string;
  /** API group; "" = core. */
  readonly group: string;
  /** The versions served, in the CRD's order. */
  readonly versions: readonly string[];
  /** The version objects are stored at (one of `versions`). */
  readonly storage: string;
  /** The resource name in API paths, e.g. `httproutes`. */
  readonly plural: string;
  /** Namespaced (else cluster-scoped). */
  readonly namespaced: boolean;
}
