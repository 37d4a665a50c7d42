/**
 * `agent stop [--state-dir <dir> | --node-id <id>] [--keep-envoy]`: stops the agent recorded in a
 * state directory — SIGTERM (it stops its Envoy, unless it was started with --keep-envoy) or,
 * with --keep-envoy, SIGUSR1 (it exits and leaves Envoy serving for the next agent to adopt).
 * With no agent running, stops the Envoy a crashed agent left behind (unless --keep-envoy).
 * @module
 */
import { parseArgs } from "node:util";
import { recordedEnvoy } from "./envoy/mod.ts";
import {
  type AgentRecord,
  defaultStateDir,
  isSameProcess,
  processStartTime,
  readRecord,
  statePaths,
} from "./envoy/mod.ts";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitGone(pid: number, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!await processStartTime(pid)) return true;
    await sleep(50);
  }
  return false;
}

/** Runs `agent stop`; returns the exit code. */
export async function stopCommand(args: string[]): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      "state-dir": { type: "string" },
      "node-id": { type: "string", default: "aether-standalone" },
      "keep-envoy": { type: "boolean" },
    },
  });
  const dir = values["state-dir"] ?? defaultStateDir(values["node-id"]!);
  const keep = values["keep-envoy"] === true;
  const agent = await readRecord<AgentRecord>(statePaths(dir).agent);
  if (agent && await isSameProcess(agent)) {
    Deno.kill(agent.pid, keep ? "SIGUSR1" : "SIGTERM");
    if (!await waitGone(agent.pid, 20000)) {
      console.error(`agent stop: agent pid ${agent.pid} did not exit within 20 s`);
      return 1;
    }
    console.log(`agent stop: agent pid ${agent.pid} stopped${keep ? "; envoy keeps running" : ""}`);
    return 0;
  }
  const envoy = await recordedEnvoy(dir);
  if (envoy && !keep) {
    Deno.kill(envoy.pid, "SIGTERM");
    if (!await waitGone(envoy.pid, 5000)) Deno.kill(envoy.pid, "SIGKILL");
    console.log(`agent stop: no agent running; stopped the envoy it left (pid ${envoy.pid})`);
    return 0;
  }
  console.error(`agent stop: no agent running with state directory ${dir}`);
  return 1;
}
