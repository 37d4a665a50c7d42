/**
 * `--shutdown-drain`: an agent told to stop drains its Envoy first. Under a keep-alive client, the
 * next response after SIGTERM still arrives and carries `connection: close` (the client reconnects
 * elsewhere: the pod is leaving its Service), a new connection is still accepted during the drain,
 * and Envoy stops only after it. Without the flag the same SIGTERM stops Envoy with no drain (the
 * kept connection is never told to close).
 */
import assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { appGateway, closeEchos, freePort, toYaml } from "./harness.ts";
import { startEchoProcesses } from "./echo_process.ts";
import {
  agentArgs,
  processesNaming,
  spawnAgent,
  stopAgentAndEnvoy,
  waitAgentReady,
} from "./agent_process.ts";

/**
 * GET / with `Host: app.example.com` through `agent`; the status, `connection` header and the
 * echo backend that answered (`x-echo-backend`).
 */
function get(
  port: number,
  agent: http.Agent,
): Promise<{ status: number; connection?: string; backend?: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: "127.0.0.1", port, path: "/", headers: { host: "app.example.com" }, agent },
      (res) => {
        res.resume();
        res.on(
          "end",
          () =>
            resolve({
              status: res.statusCode ?? 0,
              connection: res.headers.connection,
              backend: res.headers["x-echo-backend"] as string | undefined,
            }),
        );
      },
    );
    req.setTimeout(5000, () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

async function drainRun(drain: string | undefined) {
  const envoy = await ensurePeer("envoy");
  const echos = await startEchoProcesses(["app"]);
  const port = freePort();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-drain-" });
  const stateDir = join(dir, "state"), config = join(dir, "config");
  await Deno.mkdir(config);
  await Deno.mkdir(stateDir);
  await Deno.writeTextFile(
    join(config, "base.yaml"),
    toYaml(...appGateway(port, echos.app)),
  );
  const args = [
    ...agentArgs("standalone", { config, envoy, name: `e2e-drain-${crypto.randomUUID()}` }),
    ...(drain ? ["--shutdown-drain", drain] : []),
  ];
  const agent = spawnAgent(args, stateDir);
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    await waitAgentReady(await agent.admin());
    const before = await get(port, keepAlive);
    assert.equal(before.status, 200);
    const stopped = Date.now();
    agent.child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    const onKept = await get(port, keepAlive).catch((e) => e as Error);
    await new Promise((r) => setTimeout(r, 700));
    const fresh = await get(port, new http.Agent({ keepAlive: false })).catch((e) => e as Error);
    // When new connections stop being answered through our route (asked every 100 ms, 20 s at
    // most): without a drain that is as soon as Envoy is gone; with one, not before the drain has
    // run. An answer that is not our echo's is not ours: once Envoy is gone another test running
    // beside this one may listen on the freed port.
    let refusedMs: number | undefined;
    while (Date.now() - stopped < 20_000) {
      const r = await get(port, new http.Agent({ keepAlive: false })).catch((e) => e as Error);
      if (r instanceof Error || r.backend !== "app") {
        refusedMs = Date.now() - stopped;
        break;
      }
      await new Promise((res) => setTimeout(res, 100));
    }
    await agent.child.status;
    const exitedMs = Date.now() - stopped;
    const left = await processesNaming(join(stateDir, "bootstrap.json"), "envoy");
    // The agent's last log lines, for a failure's message (what its shutdown did, and when).
    const log = (await Deno.readTextFile(join(stateDir, "agent.log")).catch(() => ""))
      .trim().split("\n").slice(-25).join("\n");
    return { before, onKept, fresh, exitedMs, left, refusedMs, log };
  } finally {
    keepAlive.destroy();
    await stopAgentAndEnvoy(agent, stateDir, "SIGKILL").catch(() => {});
    await closeEchos(echos);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

Deno.test("edge: --shutdown-drain drains Envoy before it stops (connection: close, new connections taken)", async () => {
  const r = await drainRun("3s");
  assert.equal(r.before.connection, undefined, "before: the connection stays open");
  assert.deepEqual(
    r.onKept,
    { status: 200, connection: "close", backend: "app" },
    "told to close, answered",
  );
  assert.deepEqual(
    r.fresh,
    { status: 200, connection: "close", backend: "app" },
    "a new connection is taken",
  );
  assert.ok(r.exitedMs >= 3000, `stopped after the drain (${r.exitedMs} ms)`);
  assert.deepEqual(r.left, [], "Envoy stopped after the drain");
  console.log(`drained for 3 s, agent gone ${r.exitedMs} ms after SIGTERM`);
  assert.ok((r.refusedMs ?? 0) >= 3000, `refused only after the drain (${r.refusedMs} ms)`);
  // Without the flag the same SIGTERM takes Envoy away with no drain.
  const plain = await drainRun(undefined);
  // Never told to close: the kept connection is answered as before or already gone with Envoy —
  // how soon Envoy is gone depends on the machine's load, so that is not timed here.
  assert.ok(
    plain.onKept instanceof Error || plain.onKept.connection !== "close",
    `no drain: the kept connection was not told to close (${JSON.stringify(plain.onKept)})`,
  );
  assert.ok(
    plain.refusedMs !== undefined,
    `no drain: new connections refused once Envoy is gone (agent gone ${plain.exitedMs} ms after ` +
      `SIGTERM; Envoy left: ${JSON.stringify(plain.left)}); the agent's last lines:\n${plain.log}`,
  );
  assert.deepEqual(plain.left, [], "no drain: Envoy stopped");
  console.log(`no drain: refused ${plain.refusedMs} ms after SIGTERM`);
});
