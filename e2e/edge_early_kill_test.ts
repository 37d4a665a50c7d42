/**
 * An agent SIGKILLed while its Envoy is still starting — before Envoy answers on its admin address,
 * the moment the agent used to record it — leaves no Envoy behind: the next agent on the state
 * directory adopts that Envoy (recorded at spawn, admin address found later) or, when the agent died
 * before even reading Envoy's pid, stops it and starts its own. Either way one Envoy runs, the agent
 * is ready (Envoy ACKed its config) and requests through it are answered. Real agent processes and
 * a real Envoy; four rounds.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { appGateway, closeEchos, freePort, toYaml, waitFor } from "./harness.ts";
import { request } from "./http_client.ts";
import { startEchoProcesses } from "./echo_process.ts";
import {
  agentArgs,
  envoyRecord,
  processesNaming,
  spawnAgent,
  stopAgentAndEnvoy,
  waitAgentReady,
} from "./agent_process.ts";

Deno.test("edge: an agent killed while its Envoy starts leaves one Envoy, adopted or replaced", async () => {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app"]);
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-early-kill-" });
  const stateDir = join(dir, "state");
  const config = join(dir, "config.yaml");
  await Deno.writeTextFile(config, toYaml(...appGateway(port, echos.app)));
  await Deno.mkdir(stateDir);
  const bootstrap = join(stateDir, "bootstrap.json");
  const args = agentArgs("standalone", {
    config,
    envoy,
    name: `e2e-early-kill-${crypto.randomUUID().slice(0, 8)}`,
  });
  let agent = spawnAgent(args, stateDir);
  try {
    for (let round = 1; round <= 4; round++) {
      // Killed the moment an Envoy process of this state directory exists.
      await waitFor(
        `round ${round}: an envoy process starts`,
        async () => (await processesNaming(bootstrap, "envoy")).length > 0,
        60_000,
      );
      agent.child.kill("SIGKILL");
      await agent.child.status;
      const orphan = await processesNaming(bootstrap, "envoy");
      agent = spawnAgent(args, stateDir);
      await waitAgentReady(await agent.admin());
      const running = await processesNaming(bootstrap, "envoy");
      assert.equal(
        running.length,
        1,
        `round ${round}: one envoy, not ${running.join(", ")}; see ${stateDir}/agent.log`,
      );
      const rec = await envoyRecord(stateDir);
      assert.equal(rec.pid, running[0], `round ${round}: the record names the running envoy`);
      const res = await request({ port, authority: "app.example.com" });
      assert.equal(res.status, 200, `round ${round}: served through the envoy`);
      console.log(
        `round ${round}: envoy ${orphan.join(",")} at the kill → ${
          running[0] === orphan[0] ? "adopted" : `replaced by ${running[0]}`
        }`,
      );
      if (round < 4) {
        // The next round kills a fresh agent whose Envoy starts from nothing.
        await stopAgentAndEnvoy(agent, stateDir);
        agent = spawnAgent(args, stateDir);
      }
    }
  } finally {
    await stopAgentAndEnvoy(agent, stateDir, "SIGKILL");
    await closeEchos(echos);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
