/**
 * `down`: stops the cluster and removes every trace of it from the machine — pods first (so the
 * kubelet unmounts volumes and CNI frees addresses), then the daemons, leftover shims and container
 * processes, mounts under the state folder, the `kubepods` cgroups, the routes/veth/netns, the
 * empty /run/containerd directories — and restores the sysctls the kubelet changed. Also the
 * checks tests use to prove that nothing is left ({@link leftovers}).
 * @module
 */
import { join } from "node:path";
import type { Logger } from "../../lib/log/mod.ts";
import { openApi, poll } from "./api.ts";
import { containerdRunDirs, kubeletSysctls, type Layout, paths } from "./layout.ts";
import { leftoverLinks, netDown, netnsExists } from "./net.ts";
import { readSysctls } from "./node.ts";
import { cmdline, stopDaemon, waitGone } from "./proc.ts";

/** Mount points at or below `dir`, deepest first (from /proc/self/mountinfo). */
export async function mountsUnder(dir: string): Promise<string[]> {
  const info = await Deno.readTextFile("/proc/self/mountinfo");
  const unescape = (s: string) =>
    s.replace(/\\(\d{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
  // The kernel names mount points by their real path: a state folder reached through a symbolic
  // link (a checkout whose .cache links to another's) has its mounts under the link's target.
  const real = await Deno.realPath(dir).catch(() => dir);
  const under = (m: string, d: string) => m === d || m.startsWith(d + "/");
  const points = info.split("\n").map((line) => unescape(line.split(" ")[4] ?? ""))
    .filter((m) => under(m, dir) || under(m, real));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

/** Where containerd binds pod network namespaces (`netns_mounts_under_state_dir = false`). */
const POD_NETNS_DIR = "/run/netns";

/**
 * Pod network namespaces containerd left bound under /run/netns (`cni-<uuid>`: a sandbox that
 * was never torn down). Other netns there (the node's own, a test's) are not the cluster's.
 */
export async function podNetnsLeft(): Promise<string[]> {
  const found: string[] = [];
  try {
    for await (const e of Deno.readDir(POD_NETNS_DIR)) {
      if (e.name.startsWith("cni-")) found.push(join(POD_NETNS_DIR, e.name));
    }
  } catch { /* no folder: none */ }
  return found.sort();
}

/** `kubepods` cgroup directories in every hierarchy, deepest first. */
export async function kubepodsCgroups(): Promise<string[]> {
  const found: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(dir)) {
      if (!e.isDirectory) continue;
      found.push(`${dir}/${e.name}`);
      await walk(`${dir}/${e.name}`);
    }
  };
  const roots = ["/sys/fs/cgroup"];
  for await (const e of Deno.readDir("/sys/fs/cgroup")) {
    if (e.isDirectory) roots.push(`/sys/fs/cgroup/${e.name}`);
  }
  for (const root of roots) {
    const k = `${root}/kubepods`;
    try {
      await Deno.stat(k);
    } catch {
      continue;
    }
    found.push(k);
    await walk(k);
  }
  return found.sort((a, b) => b.length - a.length);
}

/** Pids of processes whose command line mentions the state folder (our daemons and shims). */
export async function processesOf(l: Layout): Promise<number[]> {
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    const pid = Number(e.name);
    if (!Number.isInteger(pid) || pid === Deno.pid) continue;
    const args = await cmdline(pid);
    if (args?.some((a) => a.includes(l.dir))) pids.push(pid);
  }
  return pids;
}

/** Kills every process inside the `kubepods` cgroups (containers whose pods were not deleted). */
async function killPodProcesses(): Promise<void> {
  for (const cg of await kubepodsCgroups()) {
    const procs = await Deno.readTextFile(`${cg}/cgroup.procs`).catch(() => "");
    for (const pid of procs.split("\n").filter((s) => s).map(Number)) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
  }
}

/** What the cluster left on the machine; every list empty (and sysctls equal) after `down`. */
export interface Leftovers {
  processes: number[];
  mounts: string[];
  /** Pod network namespaces still bound under /run/netns. */
  podNetns: string[];
  links: string[];
  netns: boolean;
  cgroups: string[];
  runDirs: string[];
  /** Sysctls that differ from the values recorded before the first kubelet start. */
  sysctls: string[];
}

/** Checks for leftovers of the cluster in `l` (`recorded`: sysctls before `up`). */
export async function leftovers(l: Layout, recorded: Record<string, string>): Promise<Leftovers> {
  const now = await readSysctls();
  const runDirs: string[] = [];
  for (const d of containerdRunDirs.slice(0, 2)) {
    if (await Deno.stat(d).then(() => true, () => false)) runDirs.push(d);
  }
  return {
    processes: await processesOf(l),
    mounts: await mountsUnder(l.dir),
    podNetns: await podNetnsLeft(),
    links: await leftoverLinks(l),
    netns: await netnsExists(l),
    cgroups: await kubepodsCgroups(),
    runDirs,
    sysctls: kubeletSysctls.filter((k) => recorded[k] !== undefined && recorded[k] !== now[k]),
  };
}

async function deletePods(l: Layout, log: Logger): Promise<void> {
  const p = paths(l);
  const api = await openApi(p.adminKubeconfig).catch(() => undefined);
  if (!api) return;
  try {
    const r = await api.request("GET", "/api/v1/pods");
    if (r.status !== 200) return;
    // deno-lint-ignore no-explicit-any
    const pods = (r.json.items ?? []) as any[];
    log.info("deleting pods", { count: pods.length });
    for (const pod of pods) {
      const { namespace, name } = pod.metadata;
      await api.request("DELETE", `/api/v1/namespaces/${namespace}/pods/${name}`, {
        gracePeriodSeconds: 1,
      });
    }
    await poll("pods deleted by the kubelet", async () => {
      const left = await api.request("GET", "/api/v1/pods");
      return left.json?.items?.length === 0 ? true : undefined;
    }, 90_000).catch((e) => log.warn("pods left", { error: String(e) }));
  } catch (e) {
    log.warn("API server unreachable; containers are killed instead", { error: String(e) });
  } finally {
    api.close();
  }
}

/** Tears the cluster in `l.dir` down (tolerates a half-started or half-stopped cluster). */
export async function nodeDown(l: Layout, log: Logger): Promise<void> {
  const p = paths(l);
  const started = Date.now();
  await Deno.remove(p.ready).catch(() => {});
  // No new pods from controllers or the scheduler while the kubelet stops the existing ones.
  await stopDaemon(l, "kube-controller-manager");
  await stopDaemon(l, "kube-scheduler");
  await deletePods(l, log);
  for (const name of ["kube-proxy", "coredns", "kubelet"]) await stopDaemon(l, name);
  await killPodProcesses();
  await stopDaemon(l, "kube-apiserver", 15_000);
  await stopDaemon(l, "etcd");
  await stopDaemon(l, "containerd");
  for (const pid of await processesOf(l)) { // shims (they name the containerd socket) and strays
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone */ }
    await waitGone(pid, 5_000);
  }
  log.info("processes stopped", { elapsedMs: Date.now() - started });
  for (const m of await mountsUnder(l.dir)) {
    await new Deno.Command("umount", { args: ["-l", m], stderr: "null" }).output();
  }
  for (const ns of await podNetnsLeft()) {
    await new Deno.Command("umount", { args: ["-l", ns], stderr: "null" }).output();
    await Deno.remove(ns).catch(() => {});
  }
  for (const cg of await kubepodsCgroups()) await Deno.remove(cg).catch(() => {});
  await netDown(l);
  // Every shim is gone by now, so what is left in containerd's shim-socket and fifo folders is
  // stale (a SIGKILLed shim leaves its socket file behind); then the folders go when empty.
  if ((await processesOf(l)).length === 0) {
    for (const d of containerdRunDirs.slice(0, 2)) {
      await Deno.remove(d, { recursive: true }).catch(() => {});
    }
  }
  for (const d of containerdRunDirs) await Deno.remove(d).catch(() => {}); // only when empty
  try {
    const recorded = JSON.parse(await Deno.readTextFile(p.sysctls)) as Record<string, string>;
    for (const [k, v] of Object.entries(recorded)) {
      await Deno.writeTextFile(`/proc/sys/${k.replaceAll(".", "/")}`, v);
    }
  } catch { /* never started */ }
  const mounts = await mountsUnder(l.dir);
  if (mounts.length > 0) {
    throw new Error(`mounts left under ${l.dir} (state kept): ${mounts.join(", ")}`);
  }
  // The daemons' logs of the last run stay readable next to the state folder.
  const lastLogs = `${l.dir}.last-logs`;
  await Deno.remove(lastLogs, { recursive: true }).catch(() => {});
  await Deno.rename(p.logs, lastLogs).catch(() => {});
  await Deno.remove(l.dir, { recursive: true }).catch(() => {});
  log.info("cluster down", { elapsedMs: Date.now() - started, logs: lastLogs });
}
