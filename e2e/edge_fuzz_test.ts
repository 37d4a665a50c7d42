/**
 * YAML fuzz against a running agent: 500 hostile files (yaml_mutations.ts) dropped one after
 * another into the watched folder while ≥ 200 req/s run against routes in another file. The agent
 * stays up, those routes answer 2xx throughout, the agent's peak RSS stays bounded, and after the
 * storm a good file serves.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  serviceFor,
  toYaml,
  waitFor,
} from "./harness.ts";
import { request } from "./http_client.ts";
import { startEchoProcesses } from "./echo_process.ts";
import { type LoadProcess, spawnLoad } from "./load_process.ts";
import { agentArgs, spawnAgent, stopAgentAndEnvoy, waitAgentReady } from "./agent_process.ts";
import { mutate } from "./yaml_mutations.ts";

/** Peak resident set size of a process in MiB (VmHWM), or 0 when it is gone. */
async function peakRssMiB(pid: number): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1] ?? 0) / 1024;
}

Deno.test("edge: 500 hostile YAML files under load — agent up, 0 non-2xx, bounded RSS, good config after", async () => {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app", "fz"]);
  const port = freePort();
  const fuzzPort = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-fuzz-" });
  const config = join(dir, "config");
  const stateDir = join(dir, "state");
  await Deno.mkdir(config);
  await Deno.mkdir(stateDir);
  await Deno.writeTextFile(
    join(config, "a-base.yaml"),
    toYaml(
      gatewayClass(),
      gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
      ...serviceFor("app", echos.app),
      ...["one", "two"].map((h) =>
        httpRoute(h, {
          parentRefs: [{ name: "gw" }],
          hostnames: [`${h}.example.com`],
          rules: [{ backendRefs: [{ name: "app", port: 8080 }] }],
        })
      ),
    ),
  );
  // The seed the mutations start from: its own Gateway, port, Service and hostnames, written as
  // block YAML so that line-level mutations bite.
  const fuzzObjects = (tag: string) => [
    gateway("fz", [{ name: "http", protocol: "HTTP", port: fuzzPort }]),
    ...serviceFor("fz", echos.fz),
    httpRoute(`fz-${tag}`, {
      parentRefs: [{ name: "fz" }],
      hostnames: [`fz-${tag}.example.com`],
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: "/" } }],
        filters: [{
          type: "RequestHeaderModifier",
          requestHeaderModifier: { set: [{ name: "x-fz", value: tag }] },
        }],
        backendRefs: [{ name: "fz", port: 8080, weight: 1 }],
      }],
    }),
  ];
  const block = (objs: unknown[]) =>
    objs.map((o) => JSON.stringify(o, null, 2).replace(/^(\s*)"([^"]+)":/gm, "$1$2:")).join(
      "\n---\n",
    );
  const seed = block(fuzzObjects("seed"));
  const agent = spawnAgent(
    agentArgs("standalone", { config, envoy, name: `e2e-fuzz-${crypto.randomUUID().slice(0, 8)}` }),
    stateDir,
  );
  let alive = true;
  agent.child.status.then(() => (alive = false));
  let load: LoadProcess | undefined;
  try {
    const admin = await agent.admin();
    await waitAgentReady(admin);
    for (const h of ["one", "two"]) {
      await waitFor(
        `${h} serves`,
        async () =>
          (await request({ port, authority: `${h}.example.com` }).catch(() => null))?.status ===
            200,
        60000,
      );
    }
    // The load runs in its own process, so this test's file writes and polls cannot starve it.
    load = await spawnLoad({ port, authorities: ["one.example.com", "two.example.com"] });
    const kinds = new Map<string, number>();
    // Five files at a time (z-fuzz-0…4), then wait for a reload that starts after the batch's
    // last write (the watcher debounces 50 ms, so the revision read right after the write is
    // older than that reload): all 500 mutations get parsed, in about 100 reloads.
    const revision = async () =>
      (await (await fetch(`http://${admin}/status`)).json()).config?.revision ?? 0;
    let reloads = 0;
    for (let i = 0; i < 500; i++) {
      const { kind, text } = mutate(seed, i);
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      await Deno.writeTextFile(join(config, `z-fuzz-${i % 5}.yaml`), text);
      if (i % 5 === 4) {
        const before = await revision();
        const deadline = Date.now() + 20000;
        while (await revision() <= before && Date.now() < deadline) {
          await new Promise((r) => setTimeout(r, 25));
        }
        reloads++;
      }
      assert.ok(alive, `the agent exited after mutation ${i} (${kind}); see ${stateDir}/agent.log`);
    }
    // Let the last reloads land, with load still running.
    await new Promise((r) => setTimeout(r, 3000));
    const health = await fetch(`http://${admin}/healthz`);
    assert.equal(health.status, 200, "the agent answers after the storm");
    await health.body?.cancel();
    const result = await load.stop();
    load = undefined;
    const peak = await peakRssMiB(agent.child.pid);
    console.log(
      `fuzz: 500 files in ${reloads} reloads (${
        [...kinds].map(([k, n]) => `${k} ${n}`).join(", ")
      }); ` +
        `${result.sent} requests in ${result.seconds.toFixed(1)} s (${
          result.rate.toFixed(0)
        } req/s), ` +
        `${result.failed} non-2xx; agent peak RSS ${peak.toFixed(0)} MiB`,
    );
    assert.ok(alive, "the agent is up");
    assert.equal(
      result.failed,
      0,
      `non-2xx on the good routes: ${JSON.stringify(result.failures)}`,
    );
    assert.ok(result.rate >= 200, `load was only ${result.rate.toFixed(0)} req/s`);
    assert.ok(
      peak > 0 && peak < 1024,
      `agent peak RSS ${peak.toFixed(0)} MiB is bounded (< 1 GiB)`,
    );

    // After the storm: the fuzz files are replaced by a good one, which serves.
    for (let k = 0; k < 5; k++) await Deno.remove(join(config, `z-fuzz-${k}.yaml`)).catch(() => {});
    await Deno.writeTextFile(join(config, "z-good.yaml"), block(fuzzObjects("final")));
    await waitFor("the good fuzz-seed config serves", async () => {
      const r = await request({ port: fuzzPort, authority: "fz-final.example.com" }).catch(() =>
        null
      );
      return r?.status === 200 && (r.json?.headers as Record<string, string>)?.["x-fz"] === "final";
    }, 60000);
    assert.equal((await request({ port, authority: "one.example.com" })).status, 200);
  } finally {
    await load?.stop().catch(() => {});
    await stopAgentAndEnvoy(agent, stateDir);
    await closeEchos(echos);
    if (!Deno.env.get("KEEP_TEST_DIR")) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
