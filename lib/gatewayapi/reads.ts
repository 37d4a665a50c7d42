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

/** Which lookup of a {@link LookupWorld} a recorded read was. */
type Lookup = "services" | "imports" | "owners";

/**
 * The lookups of one computation (filled while it runs, read-only afterwards): one flat list of
 * (lookup, key, result) triples rather than a Map per lookup kind — a route converts with a few
 * lookups, and a resolve converts thousands of routes, each with its own Reads.
 */
export class Reads {
  #list: (string | KubeObject | undefined)[] = [];
  /** ReferenceGrants were consulted (a cross-namespace reference). */
  grants = false;

  /** Records that the Service `key` (`<ns>/<name>`) was looked up and gave `svc`. */
  service(key: string, svc: KubeObject | undefined): void {
    this.#list.push("services", key, svc);
  }

  /** Records that the ServiceImport `key` was looked up and gave `si`. */
  import(key: string, si: KubeObject | undefined): void {
    this.#list.push("imports", key, si);
  }

  /** Records that the owner of mesh name `name` was looked up and was `owner`. */
  owner(name: string, owner: KubeObject | undefined): void {
    this.#list.push("owners", name, owner);
  }

  /** Whether every recorded lookup gives the same object in `world`. */
  holdIn(world: LookupWorld): boolean {
    const list = this.#list;
    for (let i = 0; i < list.length; i += 3) {
      if (world[list[i] as Lookup].get(list[i + 1] as string) !== list[i + 2]) return false;
    }
    return true;
  }
}

/**
 * Whether a result computed in `then` with lookups `reads` holds in `now`: the same world, or
 * every lookup gives the same object again (and the grants are the same when they were read).
 */
export function readsHold(reads: Reads, then: LookupWorld, now: LookupWorld): boolean {
  if (then === now) return true;
  if (then.meshDomain !== now.meshDomain) return false;
  if (reads.grants && then.grants !== now.grants) return false;
  return reads.holdIn(now);
}
