/**
 * An index of items by Gateway API hostname that answers "which items' hostnames cover this name"
 * and "which item, added first, has a hostname intersecting this name" without comparing every
 * pair: exact names are looked up directly, wildcards by the dot-suffixes of the queried name.
 * @module
 */
import { isWildcard } from "./hostnames.ts";

/** One indexed item with the hostname it was added under and its insertion order. */
export interface HostEntry<T> {
  host: string;
  item: T;
  seq: number;
}

/** The proper dot-suffixes of a name's matched part: `a.b.c` and `*.a.b.c` give `.b.c`, `.c`. */
function dotSuffixes(host: string): string[] {
  const rest = isWildcard(host) ? host.slice(1) : host;
  const out: string[] = [];
  for (let i = rest.indexOf(".", 1); i > 0; i = rest.indexOf(".", i + 1)) out.push(rest.slice(i));
  return out;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V) {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** Items by hostname; `*` (or an empty hostname) matches any name. */
export class HostnameIndex<T> {
  #seq = 0;
  #all: HostEntry<T>[] = [];
  #star: HostEntry<T>[] = [];
  #exact = new Map<string, HostEntry<T>[]>();
  /** Wildcards `*.x.y` by their suffix `.x.y`. */
  #wildcards = new Map<string, HostEntry<T>[]>();
  /**
   * Every non-`*` name under each proper dot-suffix of it (what a wildcard query covers), built
   * on the first {@link firstIntersecting} (virtual hosts only ask {@link covering}).
   */
  #under?: Map<string, HostEntry<T>[]>;

  /** Adds `item` under `host`. */
  add(host: string, item: T) {
    const h = host || "*";
    const e: HostEntry<T> = { host: h, item, seq: this.#seq++ };
    this.#all.push(e);
    if (h === "*") {
      this.#star.push(e);
      return;
    }
    push(this.#exact, h, e);
    if (isWildcard(h)) push(this.#wildcards, h.slice(1), e);
    if (this.#under) { for (const suffix of dotSuffixes(h)) push(this.#under, suffix, e); }
  }

  #namesUnder(): Map<string, HostEntry<T>[]> {
    if (this.#under) return this.#under;
    const under = new Map<string, HostEntry<T>[]>();
    for (const e of this.#all) {
      if (e.host !== "*") { for (const suffix of dotSuffixes(e.host)) push(under, suffix, e); }
    }
    return this.#under = under;
  }

  /** Entries whose hostname covers `name` (see hostnames.ts `covers`), in no particular order. */
  covering(name: string): HostEntry<T>[] {
    if (name === "*") return [...this.#star];
    const out = [...this.#star, ...(this.#exact.get(name) ?? [])];
    if (this.#wildcards.size === 0) return out;
    for (const suffix of dotSuffixes(name)) out.push(...(this.#wildcards.get(suffix) ?? []));
    return out;
  }

  /** The first-added entry whose hostname intersects `name` (either covers the other). */
  firstIntersecting(name: string): HostEntry<T> | undefined {
    const h = name || "*";
    if (h === "*") return this.#all[0];
    let best: HostEntry<T> | undefined;
    const consider = (list: HostEntry<T>[] | undefined) => {
      const e = list?.[0];
      if (e && (!best || e.seq < best.seq)) best = e;
    };
    consider(this.#star);
    consider(this.#exact.get(h));
    for (const suffix of dotSuffixes(h)) consider(this.#wildcards.get(suffix));
    if (isWildcard(h)) consider(this.#namesUnder().get(h.slice(1)));
    return best;
  }
}
