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
