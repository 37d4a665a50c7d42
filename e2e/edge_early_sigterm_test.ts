/**
 * A SIGTERM while the agent is still starting — right after it launched Envoy, before its start has
 * returned — stops it the same way as later: it says it is shutting down, waits for the start, and
 * takes its Envoy with it. (Before, the handlers came after the start: such a SIGTERM ended the
 * process by the default action and left Envoy running with nobody to stop it.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { appGateway, closeEchos, freePort, toYaml } from "./harness.ts";
import { startEchoProcesses } from "./echo_process.ts";
import { agentArgs, processesNaming, spawnAgent, stopAgentAndEnvoy } from "./agent_process.ts";

Deno.test("edge: a SIGTERM during the start stops the agent and its Envoy", async () => {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app"]);
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-early-term-" });
  const stateDir = join(dir, "state"), config = join(dir, "config");
  await Deno.mkdir(config);
  await Deno.mkdir(stateDir);
  await Deno.writeTextFile(join(config, "base.yaml"), toYaml(...appGateway(freePort(), echos.app)));
  const agent = spawnAgent(
    agentArgs("standalone", { config, envoy, name: `e2e-early-${crypto.randomUUID()}` }),
    stateDir,
  );
  const log = () => Deno.readTextFile(join(stateDir, "agent.log")).catch(() => "");
  try {
    // The moment Envoy is launched: the start is still under way (xDS, first config, readiness).
    const deadline = Date.now() + 60_000;
    while (!(await log()).includes('"starting envoy"')) {
      assert.ok(Date.now() < deadline, "the agent never started Envoy");
      await new Promise((r) => setTimeout(r, 5));
    }
    agent.child.kill("SIGTERM");
    const status = await agent.child.status;
    assert.equal(status.code, 0, `a handled stop exits 0, not by the signal (${status.signal})`);
    assert.match(await log(), /"shutting down"/, "the stop is logged");
    assert.deepEqual(
      await processesNaming(join(stateDir, "bootstrap.json"), "envoy"),
      [],
      "Envoy stopped with the agent",
    );
  } finally {
    await stopAgentAndEnvoy(agent, stateDir, "SIGKILL").catch(() => {});
    await closeEchos(echos);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
