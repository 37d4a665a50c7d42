import assert from "node:assert/strict";
import {
  bucketDiff,
  envoyHistograms,
  fortioSummary,
  hopPercentiles,
  median,
  percentile,
} from "./latency_hist.ts";
import { parseSchedstat, schedWindow } from "./schedstat.ts";

Deno.test("percentile interpolates inside the bucket that holds the rank", () => {
  const b = [{ start: 0, end: 1, count: 50 }, { start: 1, end: 2, count: 50 }];
  assert.equal(percentile(b, 50), 1);
  assert.equal(percentile(b, 75), 1.5);
  assert.equal(percentile(b, 100), 2);
  assert.ok(Number.isNaN(percentile([], 50)));
  // Unsorted input and empty buckets do not matter.
  const c = [{ start: 5, end: 6, count: 1 }, { start: 0, end: 1, count: 0 }, {
    start: 1,
    end: 2,
    count: 3,
  }];
  assert.deepEqual(hopPercentiles(c), { p50: 1.667, p90: 5.6, p99: 5.96, "p99.9": 5.996 });
});

Deno.test("fortioSummary reads fortio's JSON result in milliseconds, non-200 as failed", () => {
  const s = fortioSummary(JSON.stringify({
    RequestedQPS: "1000",
    ActualQPS: 998.54,
    RetCodes: { "200": 9, "503": 1 },
    DurationHistogram: {
      Count: 10,
      Min: 0.0004,
      Max: 0.003,
      Avg: 0.001,
      Data: [{ Start: 0.0004, End: 0.001, Count: 8 }, { Start: 0.002, End: 0.003, Count: 2 }],
    },
  }));
  assert.equal(s.requestedQps, 1000);
  assert.equal(s.actualQps, 998.5);
  assert.equal(s.failed, 1);
  assert.deepEqual(s.buckets, [{ start: 0.4, end: 1, count: 8 }, { start: 2, end: 3, count: 2 }]);
  assert.equal(hopPercentiles(s.buckets).p50, 0.775);
  assert.throws(() => fortioSummary("{}"), /not a fortio result/);
});

Deno.test("Envoy detailed histograms: the window between two cumulative snapshots", () => {
  const snap = (counts: number[]) =>
    JSON.stringify({
      stats: [{ name: "x", value: 1 }, {
        histograms: {
          supported_percentiles: [50],
          details: [{
            name: "http.p.downstream_rq_time",
            totals: counts.map((c, i) => ({ lower_bound: i, width: i === 0 ? 0 : 0.1, count: c })),
          }],
        },
      }],
    });
  const before = envoyHistograms(snap([4, 10]));
  const after = envoyHistograms(snap([4, 30, 5]));
  const d = bucketDiff(
    after.get("http.p.downstream_rq_time")!,
    before.get("http.p.downstream_rq_time"),
  );
  assert.deepEqual(d, [{ start: 1, end: 1.1, count: 20 }, { start: 2, end: 2.1, count: 5 }]);
  assert.equal(percentile(d, 50), 1.0625);
});

Deno.test("median of odd, even and NaN-bearing lists", () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 2, 3]), 2.5);
  assert.equal(median([NaN, 5]), 5);
  assert.ok(Number.isNaN(median([])));
});

Deno.test("schedstat: a window's CPU, run-queue wait and wait per timeslice", () => {
  const a = parseSchedstat("1000000000 500000000 1000\n");
  const b = parseSchedstat("3000000000 2500000000 3000");
  assert.deepEqual(schedWindow(a, b), { cpuMs: 2000, waitMs: 2000, waitPerSliceUs: 1000 });
  assert.throws(() => parseSchedstat("x"), /bad schedstat/);
});
