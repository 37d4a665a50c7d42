import assert from "node:assert/strict";
import { parseDuration } from "./duration.ts";

Deno.test("parseDuration: GEP-2257 durations to milliseconds", () => {
  const cases: [string, number | undefined][] = [
    ["1h", 3_600_000],
    ["500ms", 500],
    ["1m30s", 90_000],
    ["10s", 10_000],
    ["1h2m3s4ms", 3_723_004],
    ["99999ms", 99_999],
    ["0s", 0],
    ["1ms1s", 1_001],
    ["2m1ms", 120_001],
  ];
  for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
});

Deno.test("parseDuration: what is not a duration is undefined", () => {
  for (const text of ["", "x", "1d", "1.5s", "-1s", "s", "1h1h1h1h1h", "123456s", "1 s", "1S"]) {
    assert.equal(parseDuration(text), undefined, text);
  }
});
