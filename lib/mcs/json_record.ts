/**
 * Reading back what other clusters wrote to the registry (never trusted to be well-formed): a
 * JSON object with named string fields and a list of ports, checked before it is used.
 * @module
 */

/**
 * `value` as an object whose `strings` fields are strings and whose `ports` is a list of objects
 * with a string `protocol` and an integer `port` (and a string `name` when `portNames`; an
 * integer `servicePort` when there is one); else undefined.
 */
// deno-lint-ignore no-explicit-any
export function parseRecord(value: string, strings: readonly string[], portNames = false): any {
  let v;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  if (strings.some((f) => typeof v[f] !== "string")) return undefined;
  if (!Array.isArray(v.ports)) return undefined;
  for (const p of v.ports) {
    if (typeof p !== "object" || p === null) return undefined;
    if (typeof p.protocol !== "string" || !Number.isInteger(p.port)) return undefined;
    if (portNames && typeof p.name !== "string") return undefined;
    if (p.servicePort !== undefined && !Number.isInteger(p.servicePort)) return undefined;
  }
  return v;
}
