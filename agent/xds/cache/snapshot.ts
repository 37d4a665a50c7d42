/**
 * Immutable xDS snapshots: the resource lists of one proxy, each resource encoded once to
 * protobuf bytes and hashed, with a content-derived version per type. A type's version is the
 * sum of its resources' shares (a hash of name and content each), so it is order-free and an
 * edit moves it by the edited resources' share deltas, without rehashing the rest (the lists are
 * encoded by encodings.ts: in place over the last one, shifted by one resource, or whole).
 * @module
 */
import { TypeUrl } from "../proto.ts";
import {
  encodeType,
  Encodings,
  type InvalidResource,
  type NamedResource,
  type TypeResources,
} from "./encodings.ts";
import { hashOf } from "./version.ts";

export { hashOf, shareOf, versionOf } from "./version.ts";
export {
  type EncodedResource,
  encodeType,
  Encodings,
  type InvalidResource,
  type NamedResource,
  type TypeResources,
} from "./encodings.ts";

/** The resource lists a snapshot is built from. Missing lists are empty. */
export interface Resources {
  listeners: NamedResource[];
  routes: NamedResource[];
  clusters: NamedResource[];
  endpoints: NamedResource[];
  secrets: NamedResource[];
  /**
   * VHDS VirtualHosts (edge and node proxies), each named `<route configuration>/<vhost>` like
   * its `name` field. Optional: missing means none.
   */
  virtualHosts?: NamedResource[];
  /**
   * SRDS ScopedRouteConfigurations (edge chains served as one route table per host). Optional:
   * missing means none.
   */
  scopedRoutes?: NamedResource[];
}

/** One line of {@link Snapshot.summary}. */
export interface SummaryItem {
  name: string;
  hash: string;
  bytes: number;
}

/**
 * Every type a snapshot carries, in make-before-break push order (SDS, CDS, EDS, LDS, SRDS, RDS,
 * and VHDS last: a virtual host only after the clusters it routes to).
 */
export const pushOrder: readonly string[] = [
  TypeUrl.secret,
  TypeUrl.cluster,
  TypeUrl.endpoint,
  TypeUrl.listener,
  TypeUrl.scopedRoute,
  TypeUrl.route,
  TypeUrl.virtualHost,
];

const listOf: Record<keyof Resources, string> = {
  listeners: TypeUrl.listener,
  routes: TypeUrl.route,
  clusters: TypeUrl.cluster,
  endpoints: TypeUrl.endpoint,
  secrets: TypeUrl.secret,
  virtualHosts: TypeUrl.virtualHost,
  scopedRoutes: TypeUrl.scopedRoute,
};

/** An immutable set of xDS resources for one proxy (or the default for every proxy). */
export class Snapshot {
  readonly #types: ReadonlyMap<string, TypeResources>;
  /** The encodings this snapshot was made with; its successors reuse them. */
  readonly encodings: Encodings;
  /** Data derived from this (immutable) snapshot, by key, made on first use. */
  readonly #derived = new Map<string, unknown>();
  /** A version of the whole snapshot, derived from the per-type versions. */
  readonly version: string;

  private constructor(types: ReadonlyMap<string, TypeResources>, encodings: Encodings) {
    this.#types = types;
    this.encodings = encodings;
    // SRDS counts only when it has resources: snapshots without scopes keep the versions they had
    // before the type existed.
    const counted = pushOrder.filter((t) => t !== TypeUrl.scopedRoute || types.get(t)!.items.size);
    this.version = hashOf(counted.map((t) => types.get(t)!.version).join(","));
  }

  /**
   * Builds a snapshot, encoding and hashing every resource once. Throws on a resource that does
   * not fit its schema, unless `onInvalid` is given: then that resource is reported and left out.
   */
  static fromResources(
    resources: Partial<Resources>,
    onInvalid?: InvalidResource,
    encodings: Encodings = new Encodings(),
  ): Snapshot {
    const types = new Map<string, TypeResources>();
    for (const [key, typeUrl] of Object.entries(listOf)) {
      const list = resources[key as keyof Resources] ?? [];
      types.set(typeUrl, encodeType(typeUrl, list, onInvalid, encodings));
    }
    return new Snapshot(types, encodings);
  }

  /** `make(this)`, computed once per snapshot and key (e.g. the VHDS alias index). */
  derive<T>(key: string, make: (snapshot: Snapshot) => T): T {
    if (!this.#derived.has(key)) this.#derived.set(key, make(this));
    return this.#derived.get(key) as T;
  }

  /** The endpoint fast path: a new snapshot sharing every other type, with only EDS re-encoded. */
  withEndpoints(endpoints: readonly NamedResource[], onInvalid?: InvalidResource): Snapshot {
    return this.withTypes({ endpoints: endpoints as NamedResource[] }, onInvalid);
  }

  /** A new snapshot with the lists given replaced (encoded again); every other type is shared. */
  withTypes(resources: Partial<Resources>, onInvalid?: InvalidResource): Snapshot {
    const types = new Map(this.#types);
    for (const [key, list] of Object.entries(resources)) {
      const typeUrl = listOf[key as keyof Resources];
      if (typeUrl && list) types.set(typeUrl, encodeType(typeUrl, list, onInvalid, this.encodings));
    }
    return new Snapshot(types, this.encodings);
  }

  /** The resources of one type (empty for an unknown type URL). */
  resources(typeUrl: string): TypeResources {
    return this.#types.get(typeUrl) ?? { version: "empty", items: new Map() };
  }

  /** The content version of one type. */
  typeVersion(typeUrl: string): string {
    return this.resources(typeUrl).version;
  }

  /** The type URLs this snapshot carries, in push order. */
  typeUrls(): readonly string[] {
    return pushOrder;
  }

  /** Per type: version and each resource's name, hash and size (for `/debug/xds`). */
  summary(): Record<string, { version: string; resources: SummaryItem[] }> {
    const out: Record<string, { version: string; resources: SummaryItem[] }> = {};
    for (const typeUrl of pushOrder) {
      const { version, items } = this.resources(typeUrl);
      out[typeUrl] = {
        version,
        resources: [...items.values()]
          .map((r) => ({ name: r.name, hash: r.hash, bytes: r.value.length }))
          .sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
      };
    }
    return out;
  }
}
