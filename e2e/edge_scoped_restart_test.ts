/**
 * Scoped routes survive the agent: a listener served as a route table per host
 * (`--scoped-routes-at 3`) keeps every host served while the agent is killed (`kill -9`) and
 * restarted twice under load — 0 failed requests, a Host in capitals included — the restarted agent
 * adopts the same Envoy, resumes its scopes and tables over delta xDS, and a route edit made while
 * it was down is served once it is back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { appGateway, closeEchos, freePort, httpRoute, toYaml, waitFor } from "./harness.ts";
import { request } from "./http_client.ts";
import { startEchoProcesses } from "./echo_process.ts";
import { type LoadProcess, spawnLoad } from "./load_process.ts";
import {
  agentArgs,
  envoyRecord,
  killAndRestart,
  spawnAgent,
  stopAgentAndEnvoy,
  waitAgentReady,
} from "./agent_process.ts";

const HOSTS = ["s0.example.com", "s1.example.com", "s2.example.com"];

Deno.test("edge: scoped routes through kill -9 of the agent ×2 under load — 0 failed, edits apply", async () => {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app"]);
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-scoped-restart-" });
  const stateDir = join(dir, "state");
  const config = join(dir, "config");
  await Deno.mkdir(config);
  await Deno.mkdir(stateDir);
  const hostsRoute = (edit: number) =>
    toYaml(httpRoute("hosts", {
      parentRefs: [{ name: "gw" }],
      hostnames: HOSTS,
      rules: [{
        filters: [{
          type: "RequestHeaderModifier",
          requestHeaderModifier: { set: [{ name: "x-edit", value: String(edit) }] },
        }],
        backendRefs: [{ name: "app", port: 8080 }],
      }],
    }));
  await Deno.writeTextFile(join(config, "base.yaml"), toYaml(...appGateway(port, echos.app)));
  await Deno.writeTextFile(join(config, "hosts.yaml"), hostsRoute(0));
  const args = [
    ...agentArgs("standalone", {
      config,
      envoy,
      name: `e2e-scoped-restart-${crypto.randomUUID().slice(0, 8)}`,
    }),
    "--scoped-routes-at",
    "3",
  ];
  let agent = spawnAgent(args, stateDir);
  const editSeen = async (host: string) =>
    ((await request({ port, authority: host }).catch(() => null))?.json?.headers as
      | Record<string, string>
      | undefined)?.["x-edit"];
  let load: LoadProcess | undefined;
  try {
    await waitAgentReady(await agent.admin());
    const first = await envoyRecord(stateDir);
    const dump = await (await fetch(`http://${first.adminAddress}/config_dump`)).text();
    const keys = [...dump.matchAll(/"string_key": ?"([^"]+)"/g)].map((m) => m[1]).sort();
    assert.deepEqual(keys, ["app.example.com", ...HOSTS], "a scope per hostname");
    for (const host of HOSTS) assert.equal(await editSeen(host), "0", host);

    load = await spawnLoad({ port, authorities: ["s1.example.com", "S2.EXAMPLE.COM"] });
    for (let i = 1; i <= 2; i++) {
      agent = await killAndRestart(
        agent,
        args,
        stateDir,
        first.pid,
        () => Deno.writeTextFile(join(config, "hosts.yaml"), hostsRoute(i)),
      );
      await waitFor(
        `edit ${i} applies`,
        async () => (await editSeen("s0.example.com")) === String(i),
      );
    }
    const result = await load.stop();
    load = undefined;
    console.log(`scoped, kill -9 ×2: ${result.sent} requests, ${result.failed} failed`);
    assert.equal(result.failed, 0, `failed requests: ${JSON.stringify(result.failures)}`);
    assert.ok(result.sent > 0);
    assert.equal(await editSeen("S1.Example.Com"), "2", "every host has the last edit");
  } finally {
    await load?.stop().catch(() => {});
    await stopAgentAndEnvoy(agent, stateDir, "SIGKILL");
    await closeEchos(echos);
    if (!Deno.env.get("KEEP_TEST_DIR")) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
