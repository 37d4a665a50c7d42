/**
 * Encoding one type's resource list for a snapshot: each resource encoded once to protobuf bytes
 * and hashed, with the type's content version the sum of its resources' shares. A list with the
 * same names at the same positions as the type's last one is encoded in place (only its new
 * resource objects encoded, the last items reused under them); one with a name inserted or taken
 * out, over the last one shifted; any other list whole, each resource looked up by object first.
 * @module
 */
import { type ElementEncodings, encodeResource } from "../proto.ts";
import { IdentityMemo, type MemoStats } from "../../../lib/memo/mod.ts";
import type { EncodeMetrics } from "./encode_metrics.ts";
import { replaced } from "./overlay_map.ts";
import { Templates } from "./templates.ts";
import { DirectEncoder } from "../direct_encode.ts";
import { hashOf, moveSum, shareOf, versionText } from "./version.ts";

/** One resource as the translator produces it (protobufjs `fromObject` form, snake_case). */
export interface NamedResource {
  name: string;
  resource: Record<string, unknown>;
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

/** The resources of one type, by name, with the type's content version. */
export interface TypeResources {
  readonly version: string;
  readonly items: ReadonlyMap<string, EncodedResource>;
}

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
  /**
   * Lists encoded in place over the type's last one, or over it shifted by one resource (hits),
   * or whole (misses).
   */
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
  const inPlace = last &&
    (last.encoded.length === list.length
      ? encodeInPlace(typeUrl, list, last, encodings)
      : encodeShifted(typeUrl, list, last, encodings));
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
    const item = known(typeUrl, list[i], encodings);
    if (!item) return undefined;
    if (item.fresh) fresh++;
    now[i] = item.item;
    sum = moveSum(sum, was[i].share, item.item.share);
  }
  counted(typeUrl, list.length, fresh, encodings);
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

/**
 * The encoding of `r`: the one its resource object was given last (same name and type), or a new
 * one (`fresh`); undefined when it does not encode.
 */
function known(
  typeUrl: string,
  r: NamedResource,
  encodings: Encodings,
): { item: EncodedResource; fresh: boolean } | undefined {
  const item = encodings.resources.peek(r.resource);
  if (item?.name === r.name && item.typeUrl === typeUrl) return { item, fresh: false };
  try {
    return { item: encoded(typeUrl, r.name, r.resource, encodings), fresh: true };
  } catch {
    return undefined;
  }
}

/** Counts a list encoded over the last one: `fresh` of its `length` resources encoded. */
function counted(typeUrl: string, length: number, fresh: number, encodings: Encodings): void {
  encodings.lists.hits++;
  encodings.resources.hits += length - fresh;
  encodings.resources.misses += fresh;
  encodings.metrics?.count(typeUrl, fresh, length - fresh);
}

/**
 * `list` encoded over `last` when it is the last list with one resource inserted or taken out
 * (the add and remove paths of resolve: one virtual host, route table or scope more or less):
 * the others are the last items at their shifted positions (encoded again only where the resource
 * object changed), and the version moves by the inserted or removed share. Undefined when the
 * names are not the last ones with one inserted or taken out, the inserted name is there already,
 * or a resource does not encode: then the caller encodes the list whole.
 */
function encodeShifted(
  typeUrl: string,
  list: readonly NamedResource[],
  last: LastList,
  encodings: Encodings,
): TypeResources | undefined {
  const was = last.encoded;
  const grow = list.length - was.length;
  if ((grow !== 1 && grow !== -1) || last.list.length !== was.length) return undefined;
  const short = grow === 1 ? was.length : list.length;
  const nameAt = (i: number) => grow === 1 ? list[i].name : was[i].name;
  const otherAt = (i: number) => grow === 1 ? was[i].name : list[i].name;
  let at = 0;
  while (at < short && nameAt(at) === otherAt(at)) at++;
  const now: EncodedResource[] = new Array(list.length);
  let sum = last.sum, fresh = 0;
  if (grow === 1) {
    if (last.resources.items.has(list[at].name)) return undefined;
    const item = known(typeUrl, list[at], encodings);
    if (!item) return undefined;
    if (item.fresh) fresh++;
    now[at] = item.item;
    sum = moveSum(sum, 0, item.item.share);
  } else sum = moveSum(sum, was[at].share, 0);
  for (let j = 0; j < list.length; j++) {
    if (grow === 1 && j === at) continue;
    const o = j < at ? j : j - grow;
    const before = was[o];
    if (list[j].name !== before.name) return undefined;
    if (list[j].resource === before.resource) {
      now[j] = before;
      continue;
    }
    const item = known(typeUrl, list[j], encodings);
    if (!item) return undefined;
    if (item.fresh) fresh++;
    now[j] = item.item;
    sum = moveSum(sum, before.share, item.item.share);
  }
  counted(typeUrl, list.length, fresh, encodings);
  const resources = {
    version: versionText(sum, list.length),
    items: new Map(now.map((r) => [r.name, r])),
  };
  encodings.types.set(typeUrl, { list, encoded: now, sum, resources });
  return resources;
}
