import assert from "node:assert/strict";
import { rssGrowth, type RssSample, soakProblems, v8HeapMiB } from "./soak.ts";
import { programOf } from "./cluster_ha.ts";

const samples = (values: number[]): RssSample[] =>
  values.map((v, i) => ({ atS: i * 5, rssMiB: { agent: v, edge: 100 } }));

Deno.test("soak: RSS growth compares the last fifth with the fifth after warm-up", () => {
  // The first fifth (warm-up) is ignored; 100 → 120 is ×1.2.
  const g = rssGrowth(samples([10, 10, 100, 100, 105, 100, 110, 120, 120, 120]));
  assert.deepEqual(g, { agent: 1.2, edge: 1 });
  assert.deepEqual(rssGrowth(samples([1, 2, 3])), {}, "too few samples: nothing to say");
});

Deno.test("soak: a failed request, a failed action or RSS growth over 10 % is a problem", () => {
  const lane = { sent: 100, ok: 100, failed: 0, statuses: { 200: 100 }, errors: [], rate: 50 };
  const clean = {
    seconds: 600,
    mesh: { ...lane, p50Ms: 1, p99Ms: 2 },
    edge: { ...lane, p50Ms: 1, p99Ms: 2 },
    events: [{ atS: 0, action: "edge rolled", ms: 1000 }],
    rss: [],
    growth: { agent: 1.05 },
  };
  assert.deepEqual(soakProblems(clean), []);
  const bad = soakProblems({
    ...clean,
    mesh: { ...clean.mesh, failed: 2, statuses: { 200: 98, 503: 2 } },
    events: [{ atS: 40, action: "web rolled", ms: 300_000, error: "timed out" }],
    growth: { agent: 1.25 },
  });
  assert.equal(bad.length, 3, bad.join("\n"));
  assert.match(bad[0], /mesh: 2 of 100 requests failed/);
  assert.match(bad[1], /web rolled at 40 s: timed out/);
  assert.match(bad[2], /agent: RSS grew ×1.25/);
  // A short soak does not judge RSS (warm-up and replaced processes are most of it).
  assert.deepEqual(soakProblems({ ...clean, seconds: 180, growth: { agent: 1.25 } }), []);
});

Deno.test("v8HeapMiB reads a process's V8 heap gauges in MiB, with or without labels", () => {
  const text = [
    "# TYPE deno_heap_used_bytes gauge",
    "deno_heap_used_bytes 37748736",
    'deno_heap_total_bytes{role="node"} 52428800',
    "deno_external_memory_bytes 1048576",
    "deno_heap_used_bytes_other 1",
  ].join("\n");
  assert.deepEqual(v8HeapMiB(text), { used: 36, total: 50, external: 1 });
  assert.deepEqual(v8HeapMiB(""), {});
});

Deno.test("soak: the node agent's pod is split by program, Deno ones by their script", () => {
  const cmd = (...args: string[]) => args.join("\0") + "\0";
  assert.equal(
    programOf("deno", cmd("/usr/local/bin/deno", "run", "-A", "agent/main.ts", "node")),
    "deno agent/main.ts",
  );
  assert.equal(
    programOf("deno", cmd("deno", "run", "cni/main.ts", "install", "--x=a.ts")),
    "deno cni/main.ts",
  );
  assert.equal(programOf("deno", cmd("deno", "repl")), "deno");
  assert.equal(programOf("pause", cmd("/pause")), "pause");
});
