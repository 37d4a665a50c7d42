/**
 * Plain-data helpers: a deep copy of JSON-like values (objects, arrays, primitives), far cheaper
 * than structuredClone for the small objects resolve copies by the thousand.
 * @module
 */

/** Whether `v` is a plain (non-array, non-null) object. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** A deep copy of JSON-like data; own enumerable keys only, in their order. */
export function cloneData<T>(v: T): T {
  if (typeof v !== "object" || v === null) return v;
  if (Array.isArray(v)) return v.map(cloneData) as T;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) out[key] = cloneData((v as Record<string, unknown>)[key]);
  return out as T;
}

/**
 * Whether two JSON-like values are deeply equal (same keys with equal values; key order ignored).
 * `skip(key)` leaves object keys out of the comparison. A key holding `undefined` counts as
 * present, so such a value may compare unequal to one without the key.
 */
export function equalData(a: unknown, b: unknown, skip?: (key: string) => boolean): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!equalData(a[i], b[i], skip)) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>, rb = b as Record<string, unknown>;
  const ka = Object.keys(ra), kb = Object.keys(rb);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (skip?.(k)) continue;
    if (!Object.hasOwn(rb, k) || !equalData(ra[k], rb[k], skip)) return false;
  }
  return true;
}
