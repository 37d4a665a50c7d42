/**
 * Immutable xDS snapshots: the five resource lists of one proxy, each resource encoded once to
 * protobuf bytes and hashed, with a content-derived version per type. A type's version is the
 * sum of its resources' shares (a hash of name and content each), so it is order-free and an
 * edit moves it by the edited resources' share deltas, without rehashing the rest. A list with
 * the same names at the same positions as the type's last one is encoded in place: only its new
 * resource objects are encoded, and the last items are reused under them.
 * @module
 */
import { type ElementEncodings, encodeResource, TypeUrl } from "../proto.ts";
import { IdentityMemo, type MemoStats } from "../../../lib/memo/mod.ts";
import type { EncodeMetrics } from "./encode_metrics.ts";
import { replaced } from "./overlay_map.ts";
import { Templates } from "./templates.ts";
import { DirectEncoder } from "../direct_encode.ts";
import { hashOf, moveSum, shareOf, versionText } from "./version.ts";

export { hashOf, shareOf, versionOf } from "./version.ts";

/** One resource as the translator produces it (protobufjs `fromObject` form, snake_case). */
export interface NamedResource {
  name: string;
  resource: Record<string, unknown>;
}

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

/** A resource encoded once: its protobuf bytes and a stable content hash (its delta version). */
export interface EncodedResource {
  readonly name: string;
  readonly typeUrl: string;
  /** The protobuf encoding (an Any's value). */
  readonly value: Uint8Array;
  /** 16 hex digits of the SHA-256 of `value`: the resource's delta xDS version. */
  readonly hash: string;
  /** The plain object it was encoded from (for `/debug/xds`); never mutate it. */
  readonly resource: Record<string, unknown>;
  /** Its share of its type's version: 52 bits of a (non-cryptographic) hash of its name and `hash`. */
  readonly share: number;
}

/** One line of {@link Snapshot.summary}. */
export interface SummaryItem {
  name: string;
  hash: string;
  bytes: number;
}

/** The resources of one type, by name, with the type's content version. */
export interface TypeResources {
  readonly version: string;
  readonly items: ReadonlyMap<string, EncodedResource>;
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

/** What {@link Encodings} remembers of a type's last list. */
interface LastList {
  /** The list as given. */
  list: readonly NamedResource[];
  /** What the list encoded to, in its order (shorter than the list when some were left out). */
  encoded: readonly EncodedResource[];
  /** The sum of their shares. */
  sum: number;
  resources: TypeResources;
}

/**
 * What one stream of snapshots remembers of encoding (a pipeline's, a node snapshot set's):
 * encodings by resource object — a caller that passes the same (never mutated) object again, as
 * the endpoint fast path does for unchanged clusters, skips re-encoding it — and by long-list
 * element (virtual host, route) inside a resource. Both memos count their hits and misses; with
 * `metrics`, every type's encoded and reused resources are counted on `/metrics` too.
 */
export class Encodings {
  readonly resources = new IdentityMemo<Record<string, unknown>, EncodedResource>();
  readonly elements: ElementEncodings = new IdentityMemo();
  /** Writes verified resources without protobufjs's conversion (its field tables, its buffer). */
  readonly direct = new DirectEncoder();
  /** Resources encoded as an earlier one's bytes with field 1 replaced (templates.ts). */
  readonly templates = new Templates();
  /**
   * Per type URL, the last list encoded and what it gave: a list with the same names at the same
   * positions is encoded in place over it (the very same resources give the same TypeResources).
   */
  readonly types = new Map<string, LastList>();
  /** Lists encoded in place over the type's last one (hits) or whole (misses). */
  readonly lists: MemoStats = { hits: 0, misses: 0 };

  constructor(readonly metrics?: EncodeMetrics) {}
}

/**
 * Called for a resource that cannot be encoded (or repeats a name) when the caller prefers
 * serving the rest over failing; the resource is left out.
 */
export type InvalidResource = (typeUrl: string, name: string, error: Error) => void;

/**
 * Encodes one type's list. A duplicate name or a resource that does not fit the schema throws an
 * error naming the type and resource — or, with `onInvalid`, is reported and left out. Resource
 * objects must not be mutated after they are passed in (their encoding is remembered).
 */
export function encodeType(
  typeUrl: string,
  list: readonly NamedResource[],
  onInvalid?: InvalidResource,
  encodings: Encodings = new Encodings(),
): TypeResources {
  const last = encodings.types.get(typeUrl);
  const inPlace = last && last.encoded.length === list.length &&
    encodeInPlace(typeUrl, list, last, encodings);
  if (inPlace) return inPlace;
  encodings.lists.misses++;
  const items = new Map<string, EncodedResource>();
  let fresh = 0, reused = 0;
  const fail = (name: string, error: Error) => {
    if (!onInvalid) throw error;
    onInvalid(typeUrl, name, error);
  };
  for (const { name, resource } of list) {
    if (items.has(name)) {
      fail(name, new Error(`duplicate ${typeUrl} resource "${name}"`));
      continue;
    }
    const known = encodings.resources.peek(resource);
    const hit = known?.name === name && known.typeUrl === typeUrl;
    encodings.resources.count(hit);
    let item = known;
    if (hit) reused++;
    else {
      try {
        item = encoded(typeUrl, name, resource, encodings);
      } catch (e) {
        fail(name, e as Error);
        continue;
      }
      fresh++;
    }
    items.set(name, item!);
  }
  encodings.metrics?.count(typeUrl, fresh, reused);
  let sum = 0;
  for (const item of items.values()) sum = moveSum(sum, 0, item.share);
  const resources = { version: versionText(sum, items.size), items };
  encodings.types.set(typeUrl, { list, encoded: [...items.values()], sum, resources });
  return resources;
}

/** Encodes one resource (and remembers it); an error names the resource. */
function encoded(
  typeUrl: string,
  name: string,
  resource: Record<string, unknown>,
  encodings: Encodings,
): EncodedResource {
  let value: Uint8Array;
  try {
    value = encodings.templates.encode(
      typeUrl,
      resource,
      () => encodeResource(typeUrl, resource, encodings.elements, encodings.direct),
    );
  } catch (e) {
    throw new Error(`resource "${name}": ${(e as Error).message}`);
  }
  const hash = hashOf(value);
  const item = { name, typeUrl, value, hash, resource, share: shareOf(name, hash) };
  encodings.resources.set(resource, item);
  return item;
}

/**
 * `list` encoded over `last` (as long): the resource objects at their last positions are kept
 * without a look, the others encoded (or found in the memo), and the items map and version are
 * the last ones moved by what changed. Undefined when a name differs from the last at its
 * position or a resource does not encode: then the caller encodes the list whole.
 */
function encodeInPlace(
  typeUrl: string,
  list: readonly NamedResource[],
  last: LastList,
  encodings: Encodings,
): TypeResources | undefined {
  const was = last.encoded;
  // The very NamedResource given at a position last time needs no look (none was left out).
  const given = last.list.length === was.length ? last.list : [];
  const moved: number[] = [];
  for (let i = 0; i < list.length; i++) {
    const r = list[i];
    if (r === given[i]) continue;
    if (r.name !== was[i].name) return undefined;
    if (r.resource !== was[i].resource) moved.push(i);
  }
  const now = moved.length ? was.slice() : [];
  let sum = last.sum, fresh = 0;
  for (const i of moved) {
    const { name, resource } = list[i];
    let item = encodings.resources.peek(resource);
    if (item?.name !== name || item.typeUrl !== typeUrl) {
      try {
        item = encoded(typeUrl, name, resource, encodings);
      } catch {
        return undefined;
      }
      fresh++;
    }
    now[i] = item;
    sum = moveSum(sum, was[i].share, item.share);
  }
  encodings.lists.hits++;
  const memo = encodings.resources;
  memo.hits += list.length - fresh;
  memo.misses += fresh;
  encodings.metrics?.count(typeUrl, fresh, list.length - fresh);
  if (moved.length === 0) {
    last.list = list;
    return last.resources;
  }
  const resources = {
    version: versionText(sum, list.length),
    items: replaced(last.resources.items, new Map(moved.map((i) => [now[i].name, now[i]]))),
  };
  encodings.types.set(typeUrl, { list, encoded: now, sum, resources });
  return resources;
}

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
