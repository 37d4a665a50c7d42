import assert from "node:assert/strict";
import { Registry } from "../metrics/mod.ts";
import { openMallocTrim, startMemoryTrim, trimIntervalFromEnv } from "./trim.ts";

/** A fake clock's timers: `tick()` runs what is due. */
function timers() {
  const due: { fn: () => void; ms: number; id: number }[] = [];
  return {
    due,
    setInterval: (
      fn: () => void,
      ms: number,
    ) => (due.push({ fn, ms, id: due.length + 1 }), due.length),
    clearInterval: (id: number) => due.splice(due.findIndex((d) => d.id === id), 1),
    tick: () => due.forEach((d) => d.fn()),
  };
}

Deno.test("memory trim: each interval trims once and counts the resident bytes given back", () => {
  const metrics = new Registry(), t = timers();
  let rss = 300, calls = 0;
  const trim = startMemoryTrim({
    metrics,
    intervalSeconds: 10,
    open: () => () => (calls++, rss -= 20, true),
    residentBytes: () => rss,
    ...t,
  });
  assert.equal(trim.active, true);
  assert.deepEqual(t.due.map((d) => d.ms), [10_000]);
  t.tick();
  t.tick();
  assert.equal(calls, 2);
  const text = metrics.render();
  assert.match(text, /^aether_memory_trims_total 2$/m);
  assert.match(text, /^aether_memory_trimmed_bytes_total 40$/m);
  // Resident memory that grew across a trim is not counted as given back.
  const grew = startMemoryTrim({
    metrics: new Registry(),
    intervalSeconds: 1,
    open: () => () => (rss += 5, false),
    residentBytes: () => rss,
    ...timers(),
  });
  assert.equal(grew.trimNow(), 0);
  trim.stop();
  assert.equal(t.due.length, 0, "stop clears the timer");
});

Deno.test("memory trim: off with 0 seconds or without glibc; nothing scheduled", () => {
  for (const o of [{ intervalSeconds: 0, open: () => () => true }, { open: () => undefined }]) {
    const t = timers(), metrics = new Registry();
    const trim = startMemoryTrim({ metrics, intervalSeconds: 10, ...o, ...t });
    assert.equal(trim.active, false);
    assert.equal(t.due.length, 0);
    assert.equal(trim.trimNow(), 0);
    assert.match(
      metrics.render(),
      /^aether_memory_trims_total 0$|# TYPE aether_memory_trims_total/m,
    );
  }
});

Deno.test("memory trim: AETHER_MEMORY_TRIM_SECONDS is seconds ≥ 0, else a clear error", () => {
  assert.equal(trimIntervalFromEnv(undefined), 10);
  assert.equal(trimIntervalFromEnv(" "), 10);
  assert.equal(trimIntervalFromEnv("0"), 0);
  assert.equal(trimIntervalFromEnv("2.5"), 2.5);
  for (const bad of ["-1", "ten", "Infinity"]) {
    assert.throws(() => trimIntervalFromEnv(bad), /AETHER_MEMORY_TRIM_SECONDS must be/);
  }
});

Deno.test("memory trim: glibc's malloc_trim opens and runs in this process", () => {
  const trim = openMallocTrim();
  assert.ok(trim, "this machine's Deno links glibc: malloc_trim must open");
  assert.equal(typeof trim(), "boolean");
});
