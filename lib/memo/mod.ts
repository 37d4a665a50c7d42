/**
 * The one memo helper of the engine: results keyed by the identity of an input object (sources
 * hand an unchanged object over as the same object), each entry valid while a caller-given check
 * of the other inputs holds. Entries go when their key object does (WeakMap). Counts hits and
 * misses, so an owner can show its hit rate. A memo belongs to one owner (a ResolveState, a
 * Translator): never module-level.
 * @module
 */

/** Hits and misses of one memo. */
export interface MemoStats {
  hits: number;
  misses: number;
}

const always = () => true;

/** A memo from input objects (by identity) to results. */
export class IdentityMemo<K extends object, V> {
  #entries = new WeakMap<K, V>();
  /** Lookups that found a valid entry. */
  hits = 0;
  /** Lookups that computed the result. */
  misses = 0;

  /**
   * The remembered value for `key` when there is one and `valid(value)` holds, else `make()`
   * (remembered for `key`, replacing any older entry).
   */
  get(key: K, make: () => V, valid: (value: V) => boolean = always): V {
    const seen = this.#entries.get(key);
    if (seen !== undefined && valid(seen)) {
      this.hits++;
      return seen;
    }
    this.misses++;
    const value = make();
    this.#entries.set(key, value);
    return value;
  }

  /** The remembered value for `key`, without counting (for owners that combine entries). */
  peek(key: K): V | undefined {
    return this.#entries.get(key);
  }

  /** Remembers `value` for `key`. */
  set(key: K, value: V): void {
    this.#entries.set(key, value);
  }

  /** Counts one hit (`true`) or miss, for owners that look entries up with {@link peek}. */
  count(hit: boolean): void {
    if (hit) this.hits++;
    else this.misses++;
  }

  /** This memo's counters. */
  stats(): MemoStats {
    return { hits: this.hits, misses: this.misses };
  }
}

/** Whether two lists hold the same items (by identity) in the same order. */
export const sameItems = (a: readonly unknown[], b: readonly unknown[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);
export { Lazy } from "./lazy.ts";
