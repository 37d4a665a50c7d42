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
  // The pattern held: digits, then a unit, up to four times (a scan, no second regex).
  let total = 0, n = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c >= 48 && c <= 57) {
      n = n * 10 + (c - 48);
      continue;
    }
    const unit = text[i] === "m" && text[i + 1] === "s" ? "ms" : text[i];
    total += n * UNIT_MS[unit];
    i += unit.length - 1;
    n = 0;
  }
  return total;
}
