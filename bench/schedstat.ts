/**
 * CPU time and run-queue wait of a process's threads from `/proc/<pid>/task/<tid>/schedstat`
 * (Linux: nanoseconds on a CPU, nanoseconds runnable but waiting for one, timeslices). The
 * difference of two readings over a measured window says how long the process's threads waited
 * for a CPU per wake-up, i.e. how much of a latency figure is the machine's load.
 * @module
 */

/** Summed over the process's threads. */
export interface SchedStat {
  runNs: number;
  waitNs: number;
  slices: number;
}

/** Parses one schedstat line: `<run ns> <wait ns> <timeslices>`. */
export function parseSchedstat(line: string): SchedStat {
  const [run, wait, slices] = line.trim().split(/\s+/).map(Number);
  if (![run, wait, slices].every(Number.isFinite)) throw new Error(`bad schedstat: ${line}`);
  return { runNs: run, waitNs: wait, slices };
}

/** The summed schedstat of every thread of `pid` (threads that end meanwhile drop out). */
export async function readSchedstat(pid: number): Promise<SchedStat> {
  const sum: SchedStat = { runNs: 0, waitNs: 0, slices: 0 };
  for await (const t of Deno.readDir(`/proc/${pid}/task`)) {
    const text = await Deno.readTextFile(`/proc/${pid}/task/${t.name}/schedstat`).catch(() => "");
    if (!text) continue;
    const s = parseSchedstat(text);
    sum.runNs += s.runNs;
    sum.waitNs += s.waitNs;
    sum.slices += s.slices;
  }
  return sum;
}

/** The window between two readings: CPU ms, wait ms, and the mean wait per timeslice in µs. */
export function schedWindow(
  before: SchedStat,
  after: SchedStat,
): { cpuMs: number; waitMs: number; waitPerSliceUs: number } {
  const run = after.runNs - before.runNs, wait = after.waitNs - before.waitNs;
  const slices = after.slices - before.slices;
  return {
    cpuMs: Math.round(run / 1e6),
    waitMs: Math.round(wait / 1e6),
    waitPerSliceUs: slices > 0 ? Math.round(wait / slices / 1e3) : 0,
  };
}

/**
 * Sets the nice value of every thread of `pid` (Linux's setpriority acts per thread, so each task
 * of the process is reniced; threads started later inherit from their creator).
 */
export async function reniceThreads(pid: number, nice: number): Promise<void> {
  const tids: string[] = [];
  for await (const t of Deno.readDir(`/proc/${pid}/task`)) tids.push(t.name);
  const out = await new Deno.Command("renice", {
    args: ["-n", String(nice), "-p", ...tids],
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`renice ${pid}: ${new TextDecoder().decode(out.stderr)}`);
}
