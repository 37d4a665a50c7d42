/**
 * The node role's Envoy outlives its agent too: `kill -9` of the node agent five times while a
 * mesh client in a pod (network namespace) sends ≥ 200 req/s through the node proxy's per-pod
 * listener: 0 failed requests, the same Envoy adopted after every restart, and a producer route
 * edit made while the agent was down applies once it is back.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { closeEchos, startEchos, waitFor } from "./harness.ts";
import { type LoadProcess, spawnLoad } from "./load_process.ts";
import { createPod, curlFrom, meshService, podObject, toYaml } from "./mesh_harness.ts";
import {
  agentArgs,
  envoyRecord,
  killAndRestart,
  spawnAgent,
  stopAgentAndEnvoy,
  waitAgentReady,
} from "./agent_process.ts";

Deno.test("mesh: kill -9 of the node agent ×5 under a pod's load — Envoy adopted, 0 failed, edits apply", async () => {
  const envoy = await ensurePeer("envoy");
  const ip = await ensurePeer("ip");
  const echos = await startEchos("web");
  const pod = await createPod();
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-mesh-restart-" });
  const config = join(dir, "config"), stateDir = join(dir, "state");
  await Deno.mkdir(config);
  await Deno.mkdir(stateDir);
  const nodeName = `node-r-${crypto.randomUUID().slice(0, 6)}`;
  const route = (i: number) => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      name: "web",
      namespace: "mesh",
      generation: 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: {
      parentRefs: [{ group: "", kind: "Service", name: "web", port: 8080 }],
      rules: [{
        filters: [{
          type: "RequestHeaderModifier",
          requestHeaderModifier: { set: [{ name: "x-edit", value: String(i) }] },
        }],
        backendRefs: [{ name: "web", port: 8080 }],
      }],
    },
  });
  await Deno.writeTextFile(
    join(config, "mesh.yaml"),
    toYaml(...meshService("web", "mesh", echos.web), podObject(pod, "team1", "client-1", nodeName)),
  );
  await Deno.writeTextFile(join(config, "route.yaml"), toYaml(route(0)));
  const args = agentArgs("node", { config, envoy, name: nodeName });
  let agent = spawnAgent(args, stateDir);
  let load: LoadProcess | undefined;
  const edit = async () =>
    (await curlFrom(pod, "web.aether.internal").catch(() => null))?.first.json?.headers as
      | Record<string, string>
      | undefined;
  try {
    await waitAgentReady(await agent.admin());
    await waitFor("the pod reaches web", async () => (await edit())?.["x-edit"] === "0", 60000);
    const first = await envoyRecord(stateDir);
    // Resolves once the pod's load has its first answers (no fixed sleep).
    load = await spawnLoad({
      port: 18081,
      authorities: ["web.aether.internal"],
      netns: { name: pod.netns, ip },
    });
    for (let i = 1; i <= 5; i++) {
      agent = await killAndRestart(
        agent,
        args,
        stateDir,
        first.pid,
        () => Deno.writeTextFile(join(config, "route.yaml"), toYaml(route(i))),
      );
      await waitFor(
        `edit ${i} applies`,
        async () => (await edit())?.["x-edit"] === String(i),
        60000,
      );
    }
    const result = await load.stop();
    load = undefined;
    console.log(
      `node kill -9 ×5: ${result.sent} requests in ${result.seconds.toFixed(1)} s (${
        result.rate.toFixed(0)
      } req/s), ${result.failed} failed`,
    );
    assert.equal(result.failed, 0, `failed requests: ${JSON.stringify(result.failures)}`);
    assert.ok(result.rate >= 200, `load was only ${result.rate.toFixed(0)} req/s`);
  } finally {
    await load?.stop().catch(() => {});
    await stopAgentAndEnvoy(agent, stateDir, "SIGTERM");
    await pod.remove();
    await closeEchos(echos);
    if (!Deno.env.get("KEEP_TEST_DIR")) await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
