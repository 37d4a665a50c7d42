import assert from "node:assert/strict";
import { addProcessMetrics, type ProcessSample, Registry } from "./mod.ts";

/** name → { type, value } of a text exposition. */
function parse(text: string): Map<string, { type?: string; value?: number }> {
  const out = new Map<string, { type?: string; value?: number }>();
  for (const line of text.trim().split("\n")) {
    const type = /^# TYPE (\S+) (\S+)$/.exec(line);
    if (type) out.set(type[1], { ...out.get(type[1]), type: type[2] });
    const sample = /^([a-z_]+) (\S+)$/.exec(line);
    if (sample) out.set(sample[1], { ...out.get(sample[1]), value: Number(sample[2]) });
  }
  return out;
}

Deno.test("process metrics: an injected reading, rendered with the standard names and types", () => {
  const registry = new Registry();
  registry.counter("aether_x_total", "Something else.").inc();
  let reads = 0;
  const sample: ProcessSample = {
    residentBytes: 123_456_789,
    cpuSeconds: 12.5,
    startTimeSeconds: 1_700_000_000.25,
    openFds: 42,
    heapUsedBytes: 30_000_000,
    heapTotalBytes: 40_000_000,
    externalBytes: 5_000_000,
  };
  addProcessMetrics(registry, () => (reads++, sample));
  assert.equal(reads, 0, "read at render time, not when added");
  const m = parse(registry.render());
  assert.equal(reads, 1);
  assert.deepEqual(Object.fromEntries(m), {
    aether_x_total: { type: "counter", value: 1 },
    process_cpu_seconds_total: { type: "counter", value: 12.5 },
    process_resident_memory_bytes: { type: "gauge", value: 123_456_789 },
    process_start_time_seconds: { type: "gauge", value: 1_700_000_000.25 },
    process_open_fds: { type: "gauge", value: 42 },
    deno_heap_used_bytes: { type: "gauge", value: 30_000_000 },
    deno_heap_total_bytes: { type: "gauge", value: 40_000_000 },
    deno_external_memory_bytes: { type: "gauge", value: 5_000_000 },
  });
  // Each render reads again: the values are current.
  sample.residentBytes = 1;
  assert.equal(parse(registry.render()).get("process_resident_memory_bytes")?.value, 1);
  assert.equal(reads, 2);
});

Deno.test("process metrics: unknown fields are left out; a failing reader leaves the rest", () => {
  const partial = new Registry();
  addProcessMetrics(partial, () => ({ residentBytes: 7, cpuSeconds: Number.NaN }));
  const text = partial.render();
  assert.deepEqual([...parse(text).keys()], ["process_resident_memory_bytes"]);
  assert.match(text, /^# HELP process_resident_memory_bytes /m);

  const failing = new Registry();
  failing.gauge("aether_y", "Still here.").set(3);
  addProcessMetrics(failing, () => {
    throw new Error("no procfs");
  });
  assert.deepEqual(Object.fromEntries(parse(failing.render())), {
    aether_y: { type: "gauge", value: 3 },
  });
});

Deno.test("process metrics: added twice, rendered once", () => {
  const registry = new Registry();
  addProcessMetrics(registry, () => ({ residentBytes: 1 }));
  addProcessMetrics(registry, () => ({ residentBytes: 2 }));
  const text = registry.render();
  assert.equal(text.match(/^process_resident_memory_bytes /gm)?.length, 1);
});

Deno.test("process metrics: this process's own reading is plausible", () => {
  const registry = new Registry();
  addProcessMetrics(registry);
  const m = parse(registry.render());
  const v = (name: string) => m.get(name)?.value ?? Number.NaN;
  assert.ok(v("process_resident_memory_bytes") > 1 << 20, "RSS over 1 MiB");
  assert.ok(v("process_cpu_seconds_total") > 0);
  assert.ok(v("process_start_time_seconds") <= Date.now() / 1000);
  assert.ok(v("process_start_time_seconds") > Date.now() / 1000 - 86_400 * 365);
  assert.ok(v("deno_heap_used_bytes") > 0);
  assert.ok(v("deno_heap_used_bytes") <= v("deno_heap_total_bytes"));
  if (Deno.build.os === "linux") assert.ok(v("process_open_fds") >= 3);
});
