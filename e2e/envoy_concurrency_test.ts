/**
 * `--envoy-concurrency`: the Envoy an agent starts runs that many worker threads (its own
 * /server_info and its threads `wrk:worker_<n>` say so); `auto`, the default, is the CPUs the agent
 * may use — in a cgroup with a one-CPU quota, one worker, where Envoy's own default would be every
 * CPU of the machine. Real agent processes, a real Envoy, a real cgroup (v2 or v1, whichever this
 * machine has).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { appGateway, closeEchos, freePort, toYaml } from "./harness.ts";
import { request } from "./http_client.ts";
import { startEchoProcesses } from "./echo_process.ts";
import {
  agentArgs,
  envoyRecord,
  spawnAgent,
  stopAgentAndEnvoy,
  waitAgentReady,
} from "./agent_process.ts";

/** A cgroup with a CPU quota of `cpus`; `join` is shell that moves the running shell into it. */
async function cpuCgroup(cpus: number): Promise<{ join: string; remove(): Promise<void> }> {
  const name = `aether-test-${crypto.randomUUID().slice(0, 8)}`;
  const v2 = await Deno.stat("/sys/fs/cgroup/cgroup.controllers").then(() => true, () => false);
  let dir: string;
  if (v2) {
    await Deno.writeTextFile("/sys/fs/cgroup/cgroup.subtree_control", "+cpu").catch(() => {});
    dir = `/sys/fs/cgroup/${name}`;
    await Deno.mkdir(dir);
    await Deno.writeTextFile(`${dir}/cpu.max`, `${cpus * 100_000} 100000`);
  } else {
    const mount = await Deno.stat("/sys/fs/cgroup/cpu").then(
      () => "/sys/fs/cgroup/cpu",
      () => "/sys/fs/cgroup/cpu,cpuacct",
    );
    dir = `${mount}/${name}`;
    await Deno.mkdir(dir);
    await Deno.writeTextFile(`${dir}/cpu.cfs_period_us`, "100000");
    await Deno.writeTextFile(`${dir}/cpu.cfs_quota_us`, String(cpus * 100_000));
  }
  return {
    join: `echo $$ > '${dir}/cgroup.procs'`,
    remove: () => Deno.remove(dir).catch(() => {}),
  };
}

/** Envoy's worker count by its own account and by its threads. */
async function workers(stateDir: string): Promise<{ configured: number; threads: number }> {
  const rec = await envoyRecord(stateDir);
  const info = await (await fetch(`http://${rec.adminAddress}/server_info`)).json();
  let threads = 0;
  for await (const t of Deno.readDir(`/proc/${rec.pid}/task`)) {
    const comm = await Deno.readTextFile(`/proc/${rec.pid}/task/${t.name}/comm`).catch(() => "");
    if (comm.startsWith("wrk:worker_")) threads++;
  }
  return { configured: Number(info.command_line_options.concurrency), threads };
}

Deno.test("edge: --envoy-concurrency sets Envoy's workers; auto follows the agent's CPU quota", async (t) => {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app"]);
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-concurrency-" });
  const config = join(dir, "config.yaml");
  await Deno.writeTextFile(config, toYaml(...appGateway(port, echos.app)));
  const run = async (name: string, extra: string[], prelude = "") => {
    const stateDir = join(dir, name);
    await Deno.mkdir(stateDir);
    const args = agentArgs("standalone", { config, envoy, name: `e2e-concurrency-${name}` });
    const agent = spawnAgent([...args, ...extra], stateDir, prelude);
    try {
      await waitAgentReady(await agent.admin());
      const res = await request({ port, authority: "app.example.com" });
      assert.equal(res.status, 200, `${name}: served; see ${stateDir}/agent.log`);
      return await workers(stateDir);
    } finally {
      await stopAgentAndEnvoy(agent, stateDir);
    }
  };
  try {
    await t.step("--envoy-concurrency 3: three workers", async () => {
      assert.deepEqual(await run("three", ["--envoy-concurrency", "3"]), {
        configured: 3,
        threads: 3,
      });
    });
    await t.step("auto, no quota: the CPUs the agent may run on", async () => {
      const n = navigator.hardwareConcurrency;
      assert.deepEqual(await run("auto", []), { configured: n, threads: n });
    });
    await t.step("auto in a cgroup with a one-CPU quota: one worker", async () => {
      const cg = await cpuCgroup(1);
      try {
        assert.deepEqual(await run("quota", [], cg.join), { configured: 1, threads: 1 });
      } finally {
        await cg.remove();
      }
    });
  } finally {
    await closeEchos(echos);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
