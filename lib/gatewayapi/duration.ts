/**
 * Gateway API durations (GEP-2257): one to four `<number><unit>` parts, units h, m, s, ms, e.g.
 * "1h", "500ms", "1m30s".
 * @module
 */

/** The CRD pattern of a Gateway API duration. */
export const DURATION_PATTERN = /^([0-9]{1,5}(h|m|s|ms)){1,4}$/;

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1_000, ms: 1 };

/** Parses a Gateway API duration into milliseconds; undefined when it is not one. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_PATTERN.test(text)) return undefined;
  let total = 0;
  for (const part of text.matchAll(/([0-9]+)(ms|h|m|s)/g)) {
    total += Number(part[1]) * UNIT_MS[part[2]];
  }
  return total;
}
