/**
 * Keeps unchanged resources the same objects from one translation to the next, so encoding skips
 * them: Snapshot remembers each resource object's encoding, and the chunked encoder (proto.ts)
 * each virtual host's and route's. A route edit then re-encodes one route of one virtual host
 * instead of the whole RouteConfiguration. What is served is unaffected: a resource is replaced
 * only by a deep-equal one.
 * @module
 */
import { equalData } from "../../../lib/data/mod.ts";
import type { MemoStats } from "../../../lib/memo/mod.ts";
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

/** A list handed out last time, and (built when first needed) its items by name. */
interface LastList {
  readonly list: readonly NamedResource[];
  byName?: Map<string, NamedResource>;
}

/**
 * Remembers the last resources handed out, per list. Each resource is compared with the last
 * one at its position first (an edit keeps every name where it was), then one position either
 * side of it (an item added or removed shifts the rest by one), and only then looked up by name —
 * and not even then when every last resource was found by position (the rest are new).
 */
export class ResourceReuse {
  #last = new Map<string, LastList>();
  /** Resources matched by position (hits) or looked up by name (misses). */
  readonly #stats: MemoStats = { hits: 0, misses: 0 };

  /** Name indexes of a last list built (a last resource not found by position). */
  #indexes = 0;

  /** How often a resource was found at (or beside) its last position, or by name. */
  stats(): MemoStats {
    return { ...this.#stats };
  }

  /** How many times a last list was indexed by name to look a resource up. */
  get indexesBuilt(): number {
    return this.#indexes;
  }

  /**
   * `resources` with every resource deep-equal to the last one of its name replaced by it; a
   * list whose every resource is the last one at its position is the last list itself.
   */
  apply<R extends Partial<Resources>>(resources: R): R {
    const out = { ...resources };
    const last = new Map<string, LastList>();
    const indexes: Indexes = new Map();
    for (const [key, list] of Object.entries(resources) as [keyof R, NamedResource[]][]) {
      if (!Array.isArray(list)) continue;
      const before = this.#last.get(key as string);
      const old = before?.list ?? [];
      let same = old.length === list.length, shift = 0, hits = 0;
      /** Positions of resources found neither at their last position nor beside it. */
      const pending: number[] = [];
      const kept = list.map((r, i) => {
        let prev: NamedResource | undefined = old[i + shift];
        if (prev === r) {
          hits++;
          same &&= shift === 0;
          return r;
        }
        if (prev?.name !== r.name) {
          if (old[i + shift + 1]?.name === r.name) prev = old[i + ++shift];
          else if (old[i + shift - 1]?.name === r.name) prev = old[i + --shift];
          else prev = undefined;
        }
        if (prev) hits++;
        else if (before) {
          this.#stats.misses++;
          pending.push(i);
          same = false;
          return r;
        }
        const item = prev === undefined ? r : kin(prev, r, indexes);
        same &&= item === old[i];
        return item;
      });
      // Looked up by name only when some last resource was not found by position: else the
      // pending ones are new (one resource added shifts the rest, and builds no index).
      if (pending.length > 0 && hits < old.length) {
        if (!before!.byName) this.#indexes++;
        const byName = before!.byName ??= new Map(old.map((o) => [o.name, o]));
        for (const i of pending) {
          const prev = byName.get(list[i].name);
          if (prev) kept[i] = kin(prev, list[i], indexes);
        }
      }
      this.#stats.hits += hits;
      const now = same ? old : kept;
      last.set(key as string, { list: now });
      out[key] = now as R[keyof R];
    }
    this.#last = last;
    return out;
  }
}

/** `prev` when `next` is it or has its resource, else `next` with `prev`'s deep-equal parts. */
const kin = (prev: NamedResource, next: NamedResource, indexes: Indexes) =>
  prev === next || prev.resource === next.resource ? prev : reused(prev, next, indexes);

/** `next` with its resource deep-equal parts taken from `prev` (the same name's last resource). */
function reused(prev: NamedResource, next: NamedResource, indexes: Indexes): NamedResource {
  const resource = stable(prev.resource, next.resource, indexes) as Data;
  return resource === prev.resource ? prev : resource === next.resource ? next : {
    name: next.name,
    resource,
  };
}
