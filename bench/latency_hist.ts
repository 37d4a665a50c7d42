/**
 * Latency histograms for the hop benches, pure: fortio's JSON result (its `DurationHistogram`,
 * seconds) and Envoy's detailed admin histograms (`/stats?format=json&histogram_buckets=detailed`,
 * milliseconds) as bucket lists, differences of two cumulative Envoy snapshots (the samples of
 * one measured window), and percentiles by linear interpolation inside a bucket.
 * @module
 */

/** One histogram bucket: `count` samples in [start, end] (milliseconds). */
export interface Bucket {
  start: number;
  end: number;
  count: number;
}

/** The percentiles every hop bench reports. */
export const HOP_PERCENTILES = [50, 90, 99, 99.9] as const;

/** Percentile `p` (0–100) of a bucket list, interpolating linearly inside the bucket; NaN if empty. */
export function percentile(buckets: Bucket[], p: number): number {
  const sorted = buckets.filter((b) => b.count > 0).sort((a, b) => a.start - b.start);
  const total = sorted.reduce((n, b) => n + b.count, 0);
  if (total === 0) return NaN;
  const rank = (p / 100) * total;
  let seen = 0;
  for (const b of sorted) {
    if (seen + b.count >= rank) {
      const inside = b.count === 0 ? 0 : (rank - seen) / b.count;
      return b.start + (b.end - b.start) * Math.max(0, Math.min(1, inside));
    }
    seen += b.count;
  }
  return sorted[sorted.length - 1].end;
}

/** `{p50, p90, p99, p99.9}` of a bucket list, rounded to µs. */
export function hopPercentiles(buckets: Bucket[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of HOP_PERCENTILES) out[`p${p}`] = roundUs(percentile(buckets, p));
  return out;
}

/** Rounds milliseconds to microseconds. */
export function roundUs(ms: number): number {
  return Math.round(ms * 1000) / 1000;
}

/** What the hop bench keeps of one fortio run. */
export interface FortioSummary {
  requestedQps: number;
  actualQps: number;
  count: number;
  /** Requests that did not answer 200 (fortio's code -1 is a socket error). */
  failed: number;
  codes: Record<string, number>;
  minMs: number;
  avgMs: number;
  maxMs: number;
  buckets: Bucket[];
}

interface FortioJson {
  RequestedQPS: string | number;
  ActualQPS: number;
  RetCodes?: Record<string, number>;
  DurationHistogram: {
    Count: number;
    Min: number;
    Max: number;
    Avg: number;
    Data?: { Start: number; End: number; Count: number }[];
  };
}

/** Reads fortio's `-json` result (durations in seconds) into milliseconds. */
export function fortioSummary(text: string): FortioSummary {
  const j = JSON.parse(text) as FortioJson;
  const h = j.DurationHistogram;
  if (!h || typeof h.Count !== "number") {
    throw new Error("not a fortio result: no DurationHistogram");
  }
  const codes = j.RetCodes ?? {};
  const ok = codes["200"] ?? 0;
  return {
    requestedQps: Number(j.RequestedQPS),
    actualQps: Math.round(j.ActualQPS * 10) / 10,
    count: h.Count,
    failed: Object.values(codes).reduce((n, c) => n + c, 0) - ok,
    codes,
    minMs: roundUs(h.Min * 1000),
    avgMs: roundUs(h.Avg * 1000),
    maxMs: roundUs(h.Max * 1000),
    buckets: (h.Data ?? []).map((d) => ({
      start: d.Start * 1000,
      end: d.End * 1000,
      count: d.Count,
    })),
  };
}

interface EnvoyDetailed {
  stats: {
    histograms?: {
      details?: { name: string; totals: { lower_bound: number; width: number; count: number }[] }[];
    };
  }[];
}

/** Envoy's cumulative detailed histograms by name (milliseconds), from `/stats?format=json&histogram_buckets=detailed`. */
export function envoyHistograms(text: string): Map<string, Bucket[]> {
  const j = JSON.parse(text) as EnvoyDetailed;
  const out = new Map<string, Bucket[]>();
  for (const s of j.stats ?? []) {
    for (const d of s.histograms?.details ?? []) {
      out.set(
        d.name,
        d.totals.map((t) => ({
          start: t.lower_bound,
          end: t.lower_bound + t.width,
          count: t.count,
        })),
      );
    }
  }
  return out;
}

/** The samples recorded between two cumulative snapshots of one histogram (after − before). */
export function bucketDiff(after: Bucket[], before: Bucket[] = []): Bucket[] {
  const key = (b: Bucket) => `${b.start}/${b.end}`;
  const prior = new Map(before.map((b) => [key(b), b.count]));
  return after
    .map((b) => ({ ...b, count: b.count - (prior.get(key(b)) ?? 0) }))
    .filter((b) => b.count > 0);
}

/** Sum of the counts. */
export function sampleCount(buckets: Bucket[]): number {
  return buckets.reduce((n, b) => n + b.count, 0);
}

/** Median of numbers (NaN when empty). */
export function median(xs: number[]): number {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}
