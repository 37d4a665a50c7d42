/**
 * Reads: the lookups one route's attachment or conversion made (Services and ServiceImports by
 * `<ns>/<name>`,
 * mesh-name owners by name, whether ReferenceGrants were consulted), recorded so a remembered
 * result can be checked against a later resolve's objects. A result stays valid while every
 * lookup it made gives the same object again: editing one Service then re-converts only the
 * routes that looked that Service up, not every route.
 * @module
 */
import type { KubeObject } from "./types.ts";

/** The objects one resolve's lookups are answered from. */
export interface LookupWorld {
  meshDomain: string;
  /** Services by `<ns>/<name>`. */
  services: ReadonlyMap<string, KubeObject>;
  /** ServiceImports by `<ns>/<name>`. */
  imports: ReadonlyMap<string, KubeObject>;
  /** The Service owning each mesh name, by name. */
  owners: ReadonlyMap<string, KubeObject>;
  /** The ReferenceGrants: the same array while they are the same objects in the same order. */
  grants: readonly KubeObject[];
}

/** The lookups of one computation (filled while it runs, read-only afterwards). */
export class Reads {
  /** Each Service key looked up, with what it gave. */
  readonly services = new Map<string, KubeObject | undefined>();
  /** Each ServiceImport key looked up, with what it gave. */
  readonly imports = new Map<string, KubeObject | undefined>();
  /** Each mesh name whose owner was looked up, with the owner. */
  readonly owners = new Map<string, KubeObject | undefined>();
  /** ReferenceGrants were consulted (a cross-namespace reference). */
  grants = false;
}

/**
 * Whether a result computed in `then` with lookups `reads` holds in `now`: the same world, or
 * every lookup gives the same object again (and the grants are the same when they were read).
 */
export function readsHold(reads: Reads, then: LookupWorld, now: LookupWorld): boolean {
  if (then === now) return true;
  if (then.meshDomain !== now.meshDomain) return false;
  if (reads.grants && then.grants !== now.grants) return false;
  for (const [key, svc] of reads.services) if (now.services.get(key) !== svc) return false;
  for (const [key, si] of reads.imports) if (now.imports.get(key) !== si) return false;
  for (const [name, owner] of reads.owners) if (now.owners.get(name) !== owner) return false;
  return true;
}
