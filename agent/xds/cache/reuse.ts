/**
 * Keeps unchanged resources the same objects from one translation to the next, so encoding skips
 * them: Snapshot remembers each resource object's encoding, and the chunked encoder (proto.ts)
 * each virtual host's and route's. A route edit then re-encodes one route of one virtual host
 * instead of the whole RouteConfiguration. What is served is unaffected: a resource is replaced
 * only by a deep-equal one.
 * @module
 */
import { equalData } from "../../../lib/data/mod.ts";
import type { NamedResource, Resources } from "./snapshot.ts";

type Data = Record<string, unknown>;

const isData = (v: unknown): v is Data => typeof v === "object" && v !== null && !Array.isArray(v);

const named = (v: unknown): v is Data & { name: string } => isData(v) && typeof v.name === "string";

/**
 * `prev` when it is deep-equal to `next`; otherwise `next`, shallow-copied where one of its lists
 * of named objects (virtual hosts, routes) reuses the equal elements of `prev`'s same-named list.
 * One walk of each: lists of named objects are compared element by element, the rest whole.
 */
function stable(prev: unknown, next: unknown, indexes: Indexes): unknown {
  if (prev === next) return prev;
  if (!isData(prev) || !isData(next)) return equalData(prev, next) ? prev : next;
  const keys = Object.keys(next);
  let same = keys.length === Object.keys(prev).length;
  let out: Data | undefined;
  for (const key of keys) {
    const list = next[key], old = prev[key];
    if (!Array.isArray(list) || !Array.isArray(old) || !list.every(named)) {
      same &&= Object.hasOwn(prev, key) && equalData(old, list);
      continue;
    }
    const kept = list.map((item, i) => {
      const was = previousOf(old, i, item.name, indexes);
      return was === undefined ? item : stable(was, item, indexes);
    });
    same &&= kept.length === old.length && kept.every((item, i) => item === old[i]);
    (out ??= { ...next })[key] = kept;
  }
  return same ? prev : out ?? next;
}

/** Names of named list elements, built (per {@link ResourceReuse.apply}) when needed. */
type Indexes = Map<unknown[], Map<string, unknown>>;

/** The element of `old` named `name`: usually at the same index `i`, else looked up. */
function previousOf(old: unknown[], i: number, name: string, indexes: Indexes): unknown {
  const same = old[i];
  if (named(same) && same.name === name) return same;
  let index = indexes.get(old);
  if (!index) {
    index = new Map();
    for (const item of old) if (named(item)) index.set(item.name, item);
    indexes.set(old, index);
  }
  return index.get(name);
}

/** Remembers the last resources handed out, per list and name. */
export class ResourceReuse {
  #last = new Map<string, Map<string, NamedResource>>();

  /** `resources` with every resource deep-equal to the last one of its name replaced by it. */
  apply<R extends Partial<Resources>>(resources: R): R {
    const out = { ...resources };
    const last = new Map<string, Map<string, NamedResource>>();
    const indexes: Indexes = new Map();
    for (const [key, list] of Object.entries(resources) as [keyof R, NamedResource[]][]) {
      if (!Array.isArray(list)) continue;
      const before = this.#last.get(key as string);
      const now = new Map<string, NamedResource>();
      const kept = list.map((r) => {
        const old = before?.get(r.name);
        const resource = old ? stable(old.resource, r.resource, indexes) as Data : r.resource;
        const item = resource === old?.resource ? old : { name: r.name, resource };
        now.set(r.name, item);
        return item;
      });
      last.set(key as string, now);
      out[key] = kept as R[keyof R];
    }
    this.#last = last;
    return out;
  }
}
