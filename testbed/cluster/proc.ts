/**
 * The node's daemons: started detached inside the node netns (`nsenter --net`, never
 * `ip netns exec`, which remounts /sys and hides the cgroup hierarchies), output to
 * `<state>/logs/<name>.log`, pid in `<state>/pids/<name>.pid`; stopped by that pid only.
 * @module
 */
import { join } from "node:path";
import { run } from "../peers/mod.ts";
import { type Layout, paths } from "./layout.ts";

/** The path of a network namespace made by `ip netns add`. */
export function netnsPath(l: Layout): string {
  return `/var/run/netns/${l.netns}`;
}

/** Quotes a word for sh. */
export function shQuote(s: string): string {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

/**
 * Starts `cmd args…` in the node netns as its own session, surviving this process; returns its pid.
 * `setsid` does not fork here (a background job of a non-interactive sh is no group leader) and
 * nsenter with only `--net` execs, so `$!` is the daemon itself.
 */
export async function startDaemon(
  l: Layout,
  name: string,
  cmd: string,
  args: string[],
  env: Record<string, string> = {},
): Promise<number> {
  const p = paths(l);
  await Deno.mkdir(p.logs, { recursive: true });
  await Deno.mkdir(p.pids, { recursive: true });
  // kube-proxy and the CNI portmap plugin run iptables, the kubelet mount/umount: sbin on PATH.
  const path = `${Deno.env.get("PATH") ?? "/usr/bin:/bin"}:/usr/sbin:/sbin`;
  const envWords = Object.entries({ PATH: path, ...env }).map(([k, v]) => `${k}=${v}`);
  const line = [
    "env",
    ...envWords,
    "nsenter",
    `--net=${netnsPath(l)}`,
    "--",
    "setsid",
    cmd,
    ...args,
  ].map(shQuote).join(" ");
  const log = join(p.logs, `${name}.log`);
  const out = await run("sh", [
    "-c",
    `${line} </dev/null >>${shQuote(log)} 2>&1 & echo $!`,
  ]);
  const pid = Number(out.trim());
  if (!Number.isInteger(pid) || pid <= 0) throw new Error(`starting ${name}: no pid (${out})`);
  await Deno.writeTextFile(join(p.pids, `${name}.pid`), `${pid}\n`);
  return pid;
}

/** The command line of a live process, or undefined. */
export async function cmdline(pid: number): Promise<string[] | undefined> {
  try {
    const raw = await Deno.readTextFile(`/proc/${pid}/cmdline`);
    return raw ? raw.split("\0").filter((s) => s) : undefined;
  } catch {
    return undefined;
  }
}

/** The recorded pid of a daemon when that process still runs (not a zombie, still ours). */
export async function daemonPid(l: Layout, name: string): Promise<number | undefined> {
  let pid: number;
  try {
    pid = Number((await Deno.readTextFile(join(paths(l).pids, `${name}.pid`))).trim());
  } catch {
    return undefined;
  }
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    if (/\) Z /.test(stat)) return undefined;
  } catch {
    return undefined;
  }
  // A recycled pid (e.g. after a reboot) is not ours: every daemon names the state folder. (The
  // command line reads empty for a moment while the env → nsenter → setsid chain execs.)
  const raw = await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => undefined);
  if (raw === undefined) return undefined;
  return raw === "" || raw.includes(l.dir) ? pid : undefined;
}

/** Waits until `pid` is gone, up to `ms`; true when it is. */
export async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!(await cmdline(pid))) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return !(await cmdline(pid));
}

/** Stops a daemon by its recorded pid: SIGTERM, SIGKILL after `graceMs`. Removes the pid file. */
export async function stopDaemon(l: Layout, name: string, graceMs = 10_000): Promise<void> {
  const pid = await daemonPid(l, name);
  if (pid !== undefined) {
    try {
      Deno.kill(pid, "SIGTERM");
    } catch { /* gone */ }
    if (!(await waitGone(pid, graceMs))) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
      await waitGone(pid, 5_000);
    }
  }
  await Deno.remove(join(paths(l).pids, `${name}.pid`)).catch(() => {});
}

/** The last lines of a daemon's log, for error messages. */
export async function logTail(l: Layout, name: string, lines = 15): Promise<string> {
  try {
    const text = await Deno.readTextFile(join(paths(l).logs, `${name}.log`));
    return text.trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}
