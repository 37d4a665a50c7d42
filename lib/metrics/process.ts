/**
 * Process metrics, read when `/metrics` is rendered, named like Prometheus' standard process
 * collector (`process_resident_memory_bytes`, `process_cpu_seconds_total`,
 * `process_start_time_seconds`, `process_open_fds`) plus the V8 heap (`deno_heap_used_bytes`,
 * `deno_heap_total_bytes`, `deno_external_memory_bytes`), as Node's prom-client adds its own.
 *
 *   addProcessMetrics(registry);               // this process
 *   addProcessMetrics(registry, () => sample); // tests: an injected reader
 * @module
 */
import { cpuUsage } from "node:process";
import type { Metric } from "./metric.ts";

/** One reading of the process. A field left out is not rendered (not known on this system). */
export interface ProcessSample {
  residentBytes?: number;
  /** User + system CPU time. */
  cpuSeconds?: number;
  /** Unix time the process started, in seconds. */
  startTimeSeconds?: number;
  openFds?: number;
  heapUsedBytes?: number;
  heapTotalBytes?: number;
  /** Memory of objects outside the V8 heap that it references (ArrayBuffers…). */
  externalBytes?: number;
}

/** Reads the process once per render. */
export type ProcessReader = () => ProcessSample;

const series: readonly {
  key: keyof ProcessSample;
  name: string;
  type: "counter" | "gauge";
  help: string;
}[] = [
  {
    key: "cpuSeconds",
    name: "process_cpu_seconds_total",
    type: "counter",
    help: "Total user and system CPU time spent in seconds.",
  },
  {
    key: "residentBytes",
    name: "process_resident_memory_bytes",
    type: "gauge",
    help: "Resident memory size in bytes.",
  },
  {
    key: "startTimeSeconds",
    name: "process_start_time_seconds",
    type: "gauge",
    help: "Start time of the process since unix epoch in seconds.",
  },
  {
    key: "openFds",
    name: "process_open_fds",
    type: "gauge",
    help: "Number of open file descriptors.",
  },
  {
    key: "heapUsedBytes",
    name: "deno_heap_used_bytes",
    type: "gauge",
    help: "V8 heap used, in bytes.",
  },
  {
    key: "heapTotalBytes",
    name: "deno_heap_total_bytes",
    type: "gauge",
    help: "V8 heap allocated (used and free), in bytes.",
  },
  {
    key: "externalBytes",
    name: "deno_external_memory_bytes",
    type: "gauge",
    help: "Memory outside the V8 heap held by JavaScript objects (ArrayBuffers…), in bytes.",
  },
];

/** The process metrics as one {@link Metric}: every series read from `read` at render time. */
export class ProcessMetrics implements Metric {
  readonly name = "process";
  constructor(readonly read: ProcessReader) {}
  render(): string[] {
    let sample: ProcessSample;
    try {
      sample = this.read();
    } catch {
      return []; // A failed reading leaves the series out this time; /metrics still answers.
    }
    const lines: string[] = [];
    for (const s of series) {
      const v = sample[s.key];
      if (v === undefined || !Number.isFinite(v)) continue;
      lines.push(`# HELP ${s.name} ${s.help}`, `# TYPE ${s.name} ${s.type}`, `${s.name} ${v}`);
    }
    return lines;
  }
}

/** Number of entries in `/proc/self/fd` (undefined where there is no procfs). */
function openFds(): number | undefined {
  try {
    let n = 0;
    for (const _ of Deno.readDirSync("/proc/self/fd")) n++;
    return n - 1; // The directory handle being read is one of them.
  } catch {
    return undefined;
  }
}

/** The reader of this Deno process. Its start time is read once, when the reader is made. */
export function denoProcessReader(): ProcessReader {
  const startTimeSeconds = performance.timeOrigin / 1000;
  return () => {
    const mem = Deno.memoryUsage();
    const cpu = cpuUsage();
    return {
      residentBytes: mem.rss,
      cpuSeconds: (cpu.user + cpu.system) / 1e6,
      startTimeSeconds,
      openFds: openFds(),
      heapUsedBytes: mem.heapUsed,
      heapTotalBytes: mem.heapTotal,
      externalBytes: mem.external,
    };
  };
}

/** Adds the process metrics to `registry` (read from this process unless a reader is given). */
export function addProcessMetrics(
  registry: { register(m: Metric): unknown },
  read: ProcessReader = denoProcessReader(),
): void {
  registry.register(new ProcessMetrics(read));
}
