/**
 * A read-only map that is an older map with some values replaced: what a snapshot's resources of
 * one type become when an edit changes a few of them in place (same names, same order). Making
 * one costs the replaced entries, not the whole map; the older map is never changed, so the
 * snapshot it belongs to stays as it was.
 * @module
 */

/** Replaced values over a base map with the same keys; iterates in the base's order. */
class OverlayMap<K, V> implements ReadonlyMap<K, V> {
  constructor(readonly base: ReadonlyMap<K, V>, readonly changes: ReadonlyMap<K, V>) {}

  get size(): number {
    return this.base.size;
  }

  get(key: K): V | undefined {
    return this.changes.get(key) ?? this.base.get(key);
  }

  has(key: K): boolean {
    return this.base.has(key);
  }

  *entries(): MapIterator<[K, V]> {
    for (const [key, value] of this.base) yield [key, this.changes.get(key) ?? value];
  }

  keys(): MapIterator<K> {
    return this.base.keys();
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) fn.call(thisArg, value, key, this);
  }
}

/**
 * `map` with the values of `changes` (keys `map` already has) in place of its own, in `map`'s
 * order. Layers do not pile up: replacing values of a replaced map gives one layer over the
 * original, and once that layer holds more than about √n entries a plain Map is made instead
 * (so n edits cost O(n√n) at most, and a lookup two map reads).
 */
export function replaced<K, V>(
  map: ReadonlyMap<K, V>,
  changes: ReadonlyMap<K, V>,
): ReadonlyMap<K, V> {
  if (changes.size === 0) return map;
  let base = map, merged = changes;
  if (map instanceof OverlayMap) {
    base = map.base;
    const both = new Map(map.changes);
    for (const [key, value] of changes) both.set(key, value);
    merged = both;
  }
  const overlay = new OverlayMap(base, merged);
  return merged.size > 16 + Math.sqrt(base.size) ? new Map(overlay) : overlay;
}
