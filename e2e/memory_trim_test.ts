/**
 * The agent hands freed native heap back to the kernel on a timer (lib/memory/trim.ts): a real
 * agent process with a real Envoy, `AETHER_MEMORY_TRIM_SECONDS=0.5`, counts its trims and the
 * resident bytes they returned on `/metrics`; with `0` it never trims. (What it is worth is a
 * benchmark's business: docs/performance.md, issue 21.)
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { appGateway, closeEchos, freePort, toYaml, waitFor } from "./harness.ts";
import { startEchoProcesses } from "./echo_process.ts";
import { agentArgs, spawnAgent, stopAgentAndEnvoy, waitAgentReady } from "./agent_process.ts";

const metric = (text: string, name: string) =>
  Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? NaN);

Deno.test("agent: freed native memory is trimmed on a timer, counted on /metrics; 0 turns it off", async () => {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app"]);
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-trim-" });
  const config = join(dir, "config.yaml");
  await Deno.writeTextFile(config, toYaml(...appGateway(freePort(), echos.app)));
  try {
    for (const seconds of ["0.5", "0"]) {
      const stateDir = join(dir, `state-${seconds}`);
      await Deno.mkdir(stateDir);
      const name = `e2e-trim-${crypto.randomUUID().slice(0, 8)}`;
      const agent = spawnAgent(
        agentArgs("standalone", { config, envoy, name }),
        stateDir,
        `export AETHER_MEMORY_TRIM_SECONDS=${seconds}`,
      );
      try {
        const admin = await agent.admin();
        await waitAgentReady(admin);
        const text = async () => await (await fetch(`http://${admin}/metrics`)).text();
        if (seconds === "0") {
          await new Promise((r) => setTimeout(r, 1500));
          const t = await text();
          assert.equal(metric(t, "aether_memory_trims_total"), NaN, "off: the counter never moves");
          assert.match(t, /# TYPE aether_memory_trims_total counter/);
        } else {
          let t = "";
          await waitFor("three trims", async () => {
            t = await text();
            return metric(t, "aether_memory_trims_total") >= 3;
          }, 30_000);
          const bytes = metric(t, "aether_memory_trimmed_bytes_total");
          console.log(`trims: ${metric(t, "aether_memory_trims_total")}, bytes returned ${bytes}`);
          assert.match(t, /# TYPE aether_memory_trimmed_bytes_total counter/);
        }
      } finally {
        await stopAgentAndEnvoy(agent, stateDir);
      }
    }
  } finally {
    await closeEchos(echos);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
