/**
 * Envoy outlives the agent: `kill -9` of the agent five times under load gives 0 failed requests;
 * each restarted agent adopts the running Envoy (one Envoy process throughout, same pid), and a
 * route edit made while the agent was down applies once it is back. `agent stop --keep-envoy`
 * leaves Envoy serving for the next agent; `agent stop` stops Envoy and removes its records.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import type { EnvoyRecord } from "../agent/envoy/mod.ts";
import { appGateway, closeEchos, freePort, httpRoute, toYaml, waitFor } from "./harness.ts";
import { request } from "./http_client.ts";
import { startEchoProcesses } from "./echo_process.ts";
import { type LoadProcess, spawnLoad } from "./load_process.ts";
import {
  adoptionsLogged,
  agentArgs,
  envoyRecord,
  killAndRestart,
  processesNaming,
  spawnAgent,
  stateRecord,
  stopAgentAndEnvoy,
  waitAgentReady,
} from "./agent_process.ts";

Deno.test("edge: kill -9 of the agent ×5 under load — Envoy adopted, 0 failed requests, edits apply", async () => {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app"]);
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-restart-" });
  const stateDir = join(dir, "state");
  const config = join(dir, "config");
  await Deno.mkdir(config);
  await Deno.writeTextFile(
    join(config, "base.yaml"),
    toYaml(...appGateway(port, echos.app)),
  );
  const edited = (i: number) =>
    toYaml(httpRoute("edited", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["edited.example.com"],
      rules: [{
        filters: [{
          type: "RequestHeaderModifier",
          requestHeaderModifier: { set: [{ name: "x-edit", value: String(i) }] },
        }],
        backendRefs: [{ name: "app", port: 8080 }],
      }],
    }));
  await Deno.writeTextFile(join(config, "edited.yaml"), edited(0));
  const args = agentArgs("standalone", {
    config,
    envoy,
    name: `e2e-restart-${crypto.randomUUID().slice(0, 8)}`,
  });
  await Deno.mkdir(stateDir);
  let agent = spawnAgent(args, stateDir);
  const editSeen = async () =>
    (await request({ port, authority: "edited.example.com" }).catch(() => null))?.json
      ?.headers as Record<string, string> | undefined;
  let load: LoadProcess | undefined;
  try {
    await waitAgentReady(await agent.admin());
    const first = await envoyRecord(stateDir);
    assert.ok(first?.pid > 0, "envoy recorded");
    await waitFor("edit 0 serves", async () => (await editSeen())?.["x-edit"] === "0", 60000);
    // The load runs in its own process, so this test's event loop cannot starve it.
    load = await spawnLoad({ port, authorities: ["app.example.com"] });
    for (let i = 1; i <= 5; i++) {
      // Edited while no agent runs: Envoy keeps serving the old config meanwhile.
      agent = await killAndRestart(
        agent,
        args,
        stateDir,
        first.pid,
        () => Deno.writeTextFile(join(config, "edited.yaml"), edited(i)),
      );
      await waitFor(
        `edit ${i} applies`,
        async () => (await editSeen())?.["x-edit"] === String(i),
        60000,
      );
    }
    const result = await load.stop();
    load = undefined;
    console.log(
      `kill -9 ×5: ${result.sent} requests in ${result.seconds.toFixed(1)} s (${
        result.rate.toFixed(0)
      } req/s), ${result.failed} failed`,
    );
    assert.equal(result.failed, 0, `failed requests: ${JSON.stringify(result.failures)}`);
    assert.ok(result.rate >= 200, `load was only ${result.rate.toFixed(0)} req/s`);
    const adoptions = await adoptionsLogged(stateDir);
    assert.equal(
      adoptions,
      5,
      `five adoptions logged, not ${adoptions}; see ${stateDir}/agent.log`,
    );

    const agentStop = (...extra: string[]) =>
      new Deno.Command(Deno.execPath(), {
        args: [
          "run",
          "-A",
          new URL("../agent/main.ts", import.meta.url).pathname,
          "stop",
          "--state-dir",
          stateDir,
          ...extra,
        ],
        stdout: "piped",
        stderr: "piped",
      }).output();
    // `agent stop --keep-envoy`: the agent exits, Envoy keeps serving; the next agent adopts it.
    const kept = await agentStop("--keep-envoy");
    assert.ok(kept.success, new TextDecoder().decode(kept.stderr));
    await agent.child.status;
    assert.deepEqual(await processesNaming(join(stateDir, "bootstrap.json"), "envoy"), [first.pid]);
    assert.equal((await request({ port, authority: "app.example.com" })).status, 200);
    agent = spawnAgent(args, stateDir);
    await waitAgentReady(await agent.admin());
    assert.equal((await stateRecord<EnvoyRecord>(stateDir, "envoy"))?.pid, first.pid);

    // `agent stop`: the agent and its Envoy stop, the records go.
    const stop = await agentStop();
    assert.ok(stop.success, new TextDecoder().decode(stop.stderr));
    await agent.child.status;
    assert.deepEqual(await processesNaming(join(stateDir, "bootstrap.json")), [], "envoy stopped");
    assert.equal(await stateRecord(stateDir, "envoy"), undefined, "envoy record removed");
    assert.equal(await stateRecord(stateDir, "agent"), undefined, "agent record removed");
  } finally {
    await load?.stop().catch(() => {});
    await stopAgentAndEnvoy(agent, stateDir, "SIGKILL");
    await closeEchos(echos);
    if (!Deno.env.get("KEEP_TEST_DIR")) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
