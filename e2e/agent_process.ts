/**
 * Runs `agent/main.ts` as its own process for restart tests (`kill -9` needs a real process):
 * output to `<stateDir>/agent.log`, the admin address read back from the state directory.
 * @module
 */
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import type { AgentRecord, EnvoyRecord } from "../agent/envoy/mod.ts";

const mainTs = fileURLToPath(new URL("../agent/main.ts", import.meta.url));

/** A running agent process. */
export interface AgentProcess {
  child: Deno.ChildProcess;
  /** The admin address once the agent has recorded it. */
  admin(): Promise<string>;
}

/** Reads a JSON record of the state directory, or undefined. */
export async function stateRecord<T = AgentRecord | EnvoyRecord>(
  stateDir: string,
  name: "agent" | "envoy",
): Promise<T | undefined> {
  try {
    return JSON.parse(await Deno.readTextFile(join(stateDir, `${name}.json`))) as T;
  } catch {
    return undefined;
  }
}

/**
 * The Envoy record of the state directory once complete (within `ms`). The agent records Envoy as
 * soon as it is spawned and adds its admin address once it answers; Envoy can ACK the first
 * revision — the agent ready — a moment before that.
 */
export async function envoyRecord(stateDir: string, ms = 60_000): Promise<EnvoyRecord> {
  const deadline = Date.now() + ms;
  for (;;) {
    const rec = await stateRecord<EnvoyRecord>(stateDir, "envoy");
    if (rec?.adminAddress) return rec;
    if (Date.now() > deadline) throw new Error(`no Envoy record in ${stateDir} after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts `agent <args…> --state-dir <stateDir>`; output is appended to `<stateDir>/agent.log`. */
export function spawnAgent(args: string[], stateDir: string, prelude = ""): AgentProcess {
  const log = join(stateDir, "agent.log");
  const quoted = [Deno.execPath(), "run", "-A", mainTs, ...args, "--state-dir", stateDir]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  // `prelude`: shell run first by the process that then becomes the agent (e.g. joining a cgroup).
  const child = new Deno.Command("sh", {
    args: ["-c", `${prelude ? `${prelude} && ` : ""}exec ${quoted} >>'${log}' 2>&1`],
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  return {
    child,
    admin: async () => {
      for (let i = 0; i < 1200; i++) {
        const rec = await stateRecord<AgentRecord>(stateDir, "agent");
        if (rec?.pid === child.pid && !rec.adminAddress.endsWith(":0")) return rec.adminAddress;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error(`agent did not record its admin address; see ${log}`);
    },
  };
}

/** Waits until `/readyz` answers 200 (Envoy ACKed the agent's current config). */
export async function waitAgentReady(adminAddress: string, timeoutMs = 60000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = "";
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`http://${adminAddress}/readyz`);
      last = await res.text();
      if (res.status === 200) return;
    } catch (e) {
      last = String(e);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`agent not ready: ${last}`);
}

/**
 * Pids of every process whose command line names `path` (e.g. one state dir's bootstrap) and,
 * with `program`, whose executable's base name is `program`.
 */
export async function processesNaming(path: string, program?: string): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = await Deno.readTextFile(`/proc/${e.name}/cmdline`);
      const args = cmd.split("\0");
      if (!args.includes(path)) continue;
      if (program && args[0].split("/").pop() !== program) continue;
      out.push(Number(e.name));
    } catch { /* gone */ }
  }
  return out;
}

/** Flags for a test agent of `role` on loopback: ephemeral admin/xDS ports, no DNS. */
export function agentArgs(
  role: "standalone" | "node",
  o: { config: string; envoy: string; name: string },
): string[] {
  return [
    role,
    "--config",
    o.config,
    "--envoy",
    o.envoy,
    "--admin-address",
    "127.0.0.1:0",
    "--xds-address",
    "127.0.0.1:0",
    "--dns-address",
    "none",
    role === "node" ? "--node-name" : "--node-id",
    o.name,
  ];
}

/** How many times the agents of `stateDir` logged adopting a running Envoy. */
export async function adoptionsLogged(stateDir: string): Promise<number> {
  const log = await Deno.readTextFile(join(stateDir, "agent.log")).catch(() => "");
  return log.match(/adopted the running envoy/g)?.length ?? 0;
}

/**
 * `kill -9` of `agent`, then `whileDown()` (e.g. an edit), then a new agent with `args`: waits
 * until it is ready and has logged the adoption, and checks that it adopted Envoy `envoyPid` —
 * the record names it and it is the only Envoy of the state directory. Returns the new agent.
 */
export async function killAndRestart(
  agent: AgentProcess,
  args: string[],
  stateDir: string,
  envoyPid: number,
  whileDown: () => Promise<void>,
): Promise<AgentProcess> {
  agent.child.kill("SIGKILL");
  await agent.child.status;
  const before = await adoptionsLogged(stateDir);
  await whileDown();
  await new Promise((r) => setTimeout(r, 300));
  const next = spawnAgent(args, stateDir);
  await waitAgentReady(await next.admin());
  // Envoy reconnects to the new agent's xDS port by itself, so the agent can be ready (its config
  // ACKed) before it has adopted Envoy: wait for the adoption itself.
  const deadline = Date.now() + 60000;
  while (await adoptionsLogged(stateDir) <= before) {
    if (Date.now() > deadline) {
      throw new Error(`the new agent did not adopt Envoy ${envoyPid} within 60 s; see agent.log`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const rec = await stateRecord<EnvoyRecord>(stateDir, "envoy");
  if (rec?.pid !== envoyPid) {
    throw new Error(`Envoy ${envoyPid} was not adopted: the record names ${rec?.pid}`);
  }
  const running = await processesNaming(join(stateDir, "bootstrap.json"), "envoy");
  if (running.length !== 1 || running[0] !== envoyPid) {
    throw new Error(`expected one Envoy (${envoyPid}), found ${running.join(", ")}`);
  }
  return next;
}

/**
 * Test cleanup: sends `signal` to the agent, waits for it to exit, then `kill -9`s any process
 * still naming the state directory's bootstrap (an Envoy the agent left running), so no Envoy
 * outlives the test.
 */
export async function stopAgentAndEnvoy(
  agent: AgentProcess,
  stateDir: string,
  signal: Deno.Signal = "SIGTERM",
): Promise<void> {
  try {
    agent.child.kill(signal);
  } catch { /* exited */ }
  await agent.child.status;
  for (const pid of await processesNaming(join(stateDir, "bootstrap.json"))) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone */ }
  }
}
