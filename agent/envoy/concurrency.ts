/**
 * How many worker threads the Envoy an agent starts runs (`--envoy-concurrency`). Envoy's own
 * default is every hardware thread of the machine, whatever the process may use: on a 64-core node
 * a pod limited to 2 CPUs still gets 64 workers, and each worker keeps its own copy of every
 * cluster it served and its upstream connections (≈ 24 MiB a worker at 1,000 routes under
 * traffic; docs/performance.md, "Envoy's workers"). `auto` (the default) is what this process may
 * actually run on: the CPUs of its affinity mask, bounded by the CPU quota of its cgroup and of
 * every parent cgroup (v2 `cpu.max`, v1 `cpu.cfs_quota_us`), rounded up, at least 1.
 * @module
 */

/** `--envoy-concurrency`: a worker count, or `auto`. */
export type EnvoyConcurrency = number | "auto";

/** Parses the flag's value (unset: auto); throws a RangeError naming the flag. */
export function parseEnvoyConcurrency(s: string | undefined): EnvoyConcurrency {
  if (s === undefined || s.trim() === "auto") return "auto";
  const n = Number(s);
  if (!/^\d+$/.test(s.trim()) || !Number.isSafeInteger(n) || n < 1 || n > 1024) {
    throw new RangeError(`--envoy-concurrency: "${s}" is not auto or a worker count (1–1024)`);
  }
  return n;
}

/**
 * The CPUs a quota allows: cgroup v2 `cpu.max` contents (`"<quota> <period>"` or `"max <period>"`),
 * rounded up; undefined for no limit or text it does not understand.
 */
export function quotaCpus(cpuMax: string): number | undefined {
  const [quota, period] = cpuMax.trim().split(/\s+/);
  const q = Number(quota), p = Number(period ?? 100_000);
  if (quota === "max" || !(q > 0) || !(p > 0)) return undefined;
  return Math.ceil(q / p);
}

/** Workers for `auto`: the affinity's CPUs bounded by the smallest quota, at least 1 (pure). */
export function autoConcurrency(cpus: number, cpuMaxes: readonly string[]): number {
  let n = Math.max(1, Math.floor(cpus));
  for (const text of cpuMaxes) {
    const q = quotaCpus(text);
    if (q !== undefined) n = Math.min(n, q);
  }
  return Math.max(1, n);
}

/** A cgroup v1 quota (`cpu.cfs_quota_us`, `cpu.cfs_period_us`) as `cpu.max` text (pure). */
export function v1CpuMax(quotaUs: string, periodUs: string): string {
  const q = Number(quotaUs.trim());
  return `${q > 0 ? q : "max"} ${periodUs.trim()}`;
}

/**
 * The CPU quotas (as `cpu.max` text) of this process's cgroup and of every parent up to the root:
 * cgroup v2 (`0::<path>`, `<root>/<path>/cpu.max`) and v1 (the `cpu` hierarchy,
 * `<root>/cpu/<path>/cpu.cfs_quota_us`). In a container whose cgroup is mounted as the root, the
 * root's files are the container's own.
 */
export async function ownCpuMaxes(
  root = "/sys/fs/cgroup",
  selfCgroup = "/proc/self/cgroup",
): Promise<string[]> {
  const lines = (await Deno.readTextFile(selfCgroup).catch(() => "")).split("\n");
  const read = (f: string) => Deno.readTextFile(f).then((t) => t, () => undefined);
  const chain = (path: string) => {
    const parts = path.split("/").filter(Boolean);
    return parts.map((_, i) => parts.slice(0, parts.length - i).join("/")).concat([""]);
  };
  const out: string[] = [];
  for (const line of lines) {
    const [, controllers, path] = line.split(":");
    if (path === undefined) continue;
    if (controllers === "") {
      for (const p of chain(path)) {
        const text = await read(`${root}/${p}/cpu.max`);
        if (text !== undefined) out.push(text);
      }
    } else if (controllers.split(",").includes("cpu")) {
      for (const p of chain(path)) {
        const dir = `${root}/${controllers}/${p}`;
        const [quota, period] = [
          await read(`${dir}/cpu.cfs_quota_us`),
          await read(`${dir}/cpu.cfs_period_us`),
        ];
        if (quota !== undefined && period !== undefined) out.push(v1CpuMax(quota, period));
      }
    }
  }
  return out;
}

/** The worker count for `c`: a number as given; `auto` from this process's affinity and cgroups. */
export async function resolveEnvoyConcurrency(c: EnvoyConcurrency): Promise<number> {
  if (c !== "auto") return c;
  return autoConcurrency(navigator.hardwareConcurrency, await ownCpuMaxes());
}

/** Envoy arguments for `workers`, unless `args` already set `--concurrency`. */
export function concurrencyArgs(workers: number, args: readonly string[] = []): string[] {
  return args.includes("--concurrency") ? [...args] : [...args, "--concurrency", String(workers)];
}
