/**
 * The admission table of the kinds aether reads: the catalogue's read kinds and node-local kinds
 * (catalogue/mod.ts `admittedKinds`) with the registry's route kinds, compiled once at module load
 * (as the admitted kinds always were). resolve() admits with it unless its options bring kinds of
 * their own (a test's route kind with its catalogue entry).
 * @module
 */
import { type AdmissionKinds, admissionKinds } from "./admission/mod.ts";
import { admittedKinds, CATALOGUE, type CatalogueKind } from "./catalogue/mod.ts";
import { ROUTE_KINDS } from "./routes/registry.ts";

/** The admission table of every kind aether reads (the registry's route kinds included). */
export const ADMISSION_KINDS: AdmissionKinds = admissionKinds(admittedKinds(ROUTE_KINDS));

/**
 * The admission table of a resolve serving `routeKinds`, their kinds described by `catalogue`:
 * {@link ADMISSION_KINDS} when they add no kind to it and the catalogue is aether's (the
 * registry's kinds or some of them: every read kind stays admitted), else a table compiled for
 * this call, of the read kinds of the registry's route kinds and theirs.
 */
export function admissionFor(
  routeKinds: readonly { readonly kind: string }[],
  catalogue?: readonly CatalogueKind[],
): AdmissionKinds {
  const extra = routeKinds.filter((k) => !Object.hasOwn(ADMISSION_KINDS, k.kind));
  if (catalogue === undefined && extra.length === 0) return ADMISSION_KINDS;
  return admissionKinds(admittedKinds([...ROUTE_KINDS, ...extra]), catalogue ?? CATALOGUE);
}
