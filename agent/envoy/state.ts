/**
 * The agent's state directory: where the Envoy it runs is recorded (pid, process start time,
 * admin and xDS addresses, bootstrap, log) so that a restarted agent finds it, proves it is that
 * very process, and adopts it; and where the running agent records itself so a second agent on
 * the same directory refuses to start and `agent stop` can find it.
 * @module
 */
import { join } from "node:path";

/** The default state directory of a node id: `$XDG_STATE_HOME/aether/<id>`, else `~/.local/state/aether/<id>`. */
export function defaultStateDir(nodeId: string): string {
  const safe = nodeId.replace(/[^A-Za-z0-9._-]/g, "_");
  const base = Deno.env.get("XDG_STATE_HOME") ??
    join(Deno.env.get("HOME") ?? Deno.cwd(), ".local", "state");
  return join(base, "aether", safe);
}

/** A process as recorded: pid plus its start time (clock ticks since boot), so a reused pid does not match. */
export interface ProcessId {
  pid: number;
  startTime: string;
}

/** The start time of a live, non-zombie process, or undefined when there is none. */
export async function processStartTime(pid: number): Promise<string | undefined> {
  try {
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z" || fields[0] === "X") return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

/** Whether the recorded process is still the one running under its pid. */
export async function isSameProcess(p: ProcessId): Promise<boolean> {
  return p.pid > 0 && (await processStartTime(p.pid)) === p.startTime;
}

/** The command line of a process (NUL-separated arguments), or "" when unreadable. */
export async function processCommandLine(pid: number): Promise<string[]> {
  try {
    return (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** What the state directory records about the Envoy. */
export interface EnvoyRecord extends ProcessId {
  binary: string;
  /** Envoy's admin address `host:port`. */
  adminAddress: string;
  /** The xDS server address its bootstrap dials (`host:port`). */
  xdsAddress: string;
  startedAt: string;
}

/** What the state directory records about the running agent. */
export interface AgentRecord extends ProcessId {
  adminAddress: string;
  xdsAddress: string;
  role: string;
}

/** Paths inside a state directory. */
export function statePaths(dir: string) {
  return {
    envoy: join(dir, "envoy.json"),
    agent: join(dir, "agent.json"),
    bootstrap: join(dir, "bootstrap.json"),
    adminAddress: join(dir, "envoy-admin-address"),
    log: join(dir, "envoy.log"),
  };
}

/** Reads a JSON record, or undefined when missing or unreadable. */
export async function readRecord<T>(path: string): Promise<T | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(path)) as T;
  } catch {
    return undefined;
  }
}

/** Writes a JSON record atomically (temp file + rename). */
export async function writeRecord(path: string, value: unknown): Promise<void> {
  const tmp = `${path}.tmp-${Deno.pid}`;
  await Deno.writeTextFile(tmp, JSON.stringify(value, null, 2) + "\n", { mode: 0o600 });
  await Deno.rename(tmp, path);
}

/** This process as a ProcessId. */
export async function selfId(): Promise<ProcessId> {
  return { pid: Deno.pid, startTime: (await processStartTime(Deno.pid)) ?? "" };
}

/**
 * Claims the state directory for this agent: refuses (Error naming the other pid and how to stop
 * it) while another live agent holds it; a record of a dead agent is replaced.
 */
export async function claimStateDir(
  dir: string,
  record: Omit<AgentRecord, keyof ProcessId>,
): Promise<{
  /** Records the addresses actually bound. */
  update(r: Partial<Omit<AgentRecord, keyof ProcessId>>): Promise<void>;
  release(): Promise<void>;
}> {
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  const paths = statePaths(dir);
  const other = await readRecord<AgentRecord>(paths.agent);
  if (other && other.pid !== Deno.pid && await isSameProcess(other)) {
    throw new Error(
      `another agent (pid ${other.pid}) is running with state directory ${dir}; stop it with ` +
        `\`agent stop --state-dir ${dir}\` or give this one its own --state-dir`,
    );
  }
  let me: AgentRecord = { ...(await selfId()), ...record };
  await writeRecord(paths.agent, me);
  return {
    update: async (r) => {
      me = { ...me, ...r };
      await writeRecord(paths.agent, me);
    },
    release: async () => {
      const now = await readRecord<AgentRecord>(paths.agent);
      if (now?.pid === me.pid) await Deno.remove(paths.agent).catch(() => {});
    },
  };
}

/** Prefix of the temporary state directories of agents run without `--state-dir`. */
export const tempStatePrefix = "aether-state-";

/**
 * Removes temporary state directories (`aether-state-*` under `parent`) that a crashed agent left:
 * its agent record names a process that is gone and no recorded Envoy runs; or it has no agent
 * record and is older than `graceMs` (a directory being set up right now has none yet).
 * Returns the paths removed.
 */
export async function cleanStaleStateDirs(
  parent: string,
  keep: string,
  graceMs = 10 * 60_000,
): Promise<string[]> {
  const removed: string[] = [];
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(parent));
  } catch {
    return removed;
  }
  for (const e of entries) {
    if (!e.isDirectory || !e.name.startsWith(tempStatePrefix)) continue;
    const dir = join(parent, e.name);
    if (dir === keep) continue;
    const paths = statePaths(dir);
    const agent = await readRecord<AgentRecord>(paths.agent);
    const envoy = await readRecord<ProcessId>(paths.envoy);
    let stale: boolean;
    if (agent) {
      stale = !await isSameProcess(agent) && !(envoy && await isSameProcess(envoy));
    } else {
      const info = await Deno.stat(dir).catch(() => undefined);
      stale = !!info?.mtime && Date.now() - info.mtime.getTime() > graceMs &&
        !(envoy && await isSameProcess(envoy));
    }
    if (stale) {
      await Deno.remove(dir, { recursive: true }).then(() => removed.push(dir), () => {});
    }
  }
  return removed;
}
