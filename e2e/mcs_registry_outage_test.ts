/**
 * The clusterset registry away under load (issue 20): a real registry etcd, a real agent process
 * and its real Envoy 1.40 routing `web.example.com` to a ServiceImport whose endpoints come from
 * another cluster's registry records. etcd is SIGKILLed for 60 s while ~40 req/s flow: no request
 * fails, the agent's `aether_registry_up` goes 0 and back to 1, one log line each way. While the
 * agent is still cut off (etcd back, the agent's path to it not yet), an endpoint is deleted, the
 * history is compacted at exactly that delete's revision, and an endpoint is added: once the agent
 * reaches etcd again its watch is refused, it relists exactly once, and Envoy has the delete and
 * the addition.
 *
 * The agent reaches etcd through a TCP gate the test opens, so "cut off while etcd is up" is a
 * state the test holds, not a race with the agent's retry timer.
 */
import assert from "node:assert/strict";
import http from "node:http";
import { join } from "node:path";
import { Logger } from "../lib/log/mod.ts";
import { clusterId, EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { freePort, gateway, gatewayClass, httpRoute, toYaml, waitFor } from "./harness.ts";
import { request } from "./http_client.ts";
import { startEchoProcesses } from "./echo_process.ts";
import {
  agentArgs,
  envoyRecord,
  spawnAgent,
  stopAgentAndEnvoy,
  waitAgentReady,
} from "./agent_process.ts";
import { startEtcd } from "./peers/etcd.ts";
import { endpointEntry } from "./registry_records.ts";
import { tcpGate } from "./tcp_gate.ts";

const OUTAGE_MS = 60_000;
const RATE = 40;
const CLUSTER = "web.default.svc.clusterset.local:80";

/** Sequential requests at about `perSecond`, counting what is not 2xx. */
function pacedLoad(port: number, authority: string, perSecond: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const failures = new Map<string, number>();
  let sent = 0, failed = 0, stopping = false;
  const started = performance.now();
  const done = (async () => {
    for (let i = 0; !stopping; i++) {
      const wait = started + (i * 1000) / perSecond - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      try {
        const r = await request({ port, authority, agent });
        if (r.status < 200 || r.status > 299) throw new Error(`HTTP ${r.status}`);
      } catch (e) {
        failed++;
        const key = (e as Error).message;
        failures.set(key, (failures.get(key) ?? 0) + 1);
      }
      sent++;
    }
  })();
  return {
    sent: () => sent,
    stop: async () => {
      stopping = true;
      await done;
      agent.destroy();
      const seconds = (performance.now() - started) / 1000;
      return { sent, failed, failures: Object.fromEntries(failures), seconds };
    },
  };
}

Deno.test("mcs: registry etcd SIGKILLed 60 s under load; a compaction past the agent relists once", async () => {
  const envoy = await ensurePeer("envoy");
  const dir = await Deno.makeTempDir({ prefix: "aether-e2e-mcs-outage-" });
  const etcd = await startEtcd(dir);
  const kv = new EtcdKv({ url: etcd.url, timeoutMs: 5000 });
  const gate = tcpGate(Number(new URL(etcd.url).port));
  const echos = await startEchoProcesses(["b1", "b2", "b3"]);
  const origin = { region: "eu", cluster: "b" };
  // Cluster b's registrar; its lease outlives the outage (etcd re-promotes leases on restart).
  const writer = new OriginWriter({
    kv,
    origin,
    writer: "registrar-b",
    ttlSeconds: 120,
    logger: new Logger("registrar", () => {}, "error"),
  });
  const eps = (...names: string[]) =>
    new Map(names.map((n) => endpointEntry(clusterId(origin), "default", "web", n, echos[n])));
  const port = freePort();
  const config = join(dir, "config"), stateDir = join(dir, "state");
  await Deno.mkdir(config);
  await Deno.mkdir(stateDir);
  await Deno.writeTextFile(
    join(config, "web.yaml"),
    toYaml(
      gatewayClass(),
      gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
      {
        apiVersion: "multicluster.x-k8s.io/v1beta1",
        kind: "ServiceImport",
        metadata: { name: "web", namespace: "default" },
        spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 80 }] },
      },
      httpRoute("web", {
        parentRefs: [{ name: "gw" }],
        hostnames: ["web.example.com"],
        rules: [{
          backendRefs: [{
            group: "multicluster.x-k8s.io",
            kind: "ServiceImport",
            name: "web",
            port: 80,
          }],
        }],
      }),
    ),
  );
  await writer.publish(eps("b1", "b2"));
  const agent = spawnAgent([
    ...agentArgs("standalone", {
      config,
      envoy,
      name: `e2e-mcs-outage-${crypto.randomUUID().slice(0, 8)}`,
    }),
    "--registry-url",
    gate.url,
    "--region",
    "eu",
    "--cluster",
    "a",
  ], stateDir);
  let load: ReturnType<typeof pacedLoad> | undefined;
  try {
    const admin = await agent.admin();
    await waitAgentReady(admin, 120_000);
    const envoyAdmin = (await envoyRecord(stateDir)).adminAddress;
    const metric = async (name: string): Promise<number | undefined> => {
      const text = await (await fetch(`http://${admin}/metrics`)).text();
      const m = new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, "m").exec(text);
      return m ? Number(m[1]) : undefined;
    };
    /** The endpoint echo names Envoy has for the ServiceImport's cluster. */
    const inEnvoy = async (): Promise<string> => {
      const res = await fetch(`http://${envoyAdmin}/clusters?format=json`);
      const json = await res.json();
      // deno-lint-ignore no-explicit-any
      const c = (json.cluster_statuses ?? []).find((c: any) => c.name === CLUSTER);
      // deno-lint-ignore no-explicit-any
      const ports = (c?.host_statuses ?? []).map((h: any) => h.address?.socket_address?.port_value);
      return Object.values(echos).filter((e) => ports.includes(e.port)).map((e) => e.name).sort()
        .join(",");
    };
    const logged = async (msg: string) =>
      (await Deno.readTextFile(join(stateDir, "agent.log"))).split("\n")
        .filter((l) => l.includes(msg)).length;

    await waitFor("b1 and b2 in Envoy", async () => await inEnvoy() === "b1,b2", 60_000);
    await waitFor("registry up", async () => await metric("aether_registry_up") === 1, 60_000);
    const relists = (await metric("aether_registry_relists_total"))!;
    load = pacedLoad(port, "web.example.com", RATE);
    await waitFor("load running", () => load!.sent() >= RATE, 60_000);

    // etcd killed: the agent keeps serving what it had, for 60 s.
    const seen = (await kv.range("/")).revision;
    Deno.kill(etcd.proc()!.child.pid, "SIGKILL");
    const killedAt = Date.now();
    await etcd.stop(); // reaps the killed process
    await waitFor("registry down", async () => await metric("aether_registry_up") === 0, 60_000);
    const downAfterMs = Date.now() - killedAt;
    await waitFor("60 s away", () => Date.now() - killedAt >= OUTAGE_MS, OUTAGE_MS + 60_000);
    assert.equal(await inEnvoy(), "b1,b2", "the last endpoints keep serving");

    // etcd back, the agent not yet: a delete, the history compacted at exactly its revision (the
    // revision after the last the agent saw), and an added endpoint.
    gate.shut();
    await etcd.start();
    await writer.publish(eps("b2"));
    const deletedAt = (await kv.range("/")).revision;
    assert.equal(deletedAt, seen + 1, "the delete is the first write after what the agent saw");
    await kv.compact(deletedAt);
    await writer.publish(eps("b2", "b3"));
    assert.equal(await metric("aether_registry_up"), 0, "the agent is still cut off");
    assert.equal(await inEnvoy(), "b1,b2");

    gate.open();
    const openedAt = Date.now();
    await waitFor(
      "registry up again",
      async () => await metric("aether_registry_up") === 1,
      60_000,
    );
    const upAt = Date.now();
    await waitFor("b1 gone and b3 in Envoy", async () => await inEnvoy() === "b2,b3", 60_000);
    const envoyAt = Date.now();
    const before = load.sent();
    await waitFor("load after the change", () => load!.sent() >= before + RATE * 2, 60_000);
    const result = await load.stop();
    load = undefined;

    const relisted = (await metric("aether_registry_relists_total"))! - relists;
    console.log(
      `registry away ${((openedAt - killedAt) / 1000).toFixed(1)} s (etcd SIGKILLed ${
        (OUTAGE_MS / 1000).toFixed(0)
      } s): ${result.sent} requests in ${result.seconds.toFixed(1)} s (${
        (result.sent / result.seconds).toFixed(1)
      } req/s), ${result.failed} failed; aether_registry_up 0 after ${downAfterMs} ms; ` +
        `after the gate opened: up in ${upAt - openedAt} ms, the delete and the addition in ` +
        `Envoy in ${envoyAt - openedAt} ms (${envoyAt - upAt} ms after up); relists ${relisted}`,
    );
    assert.equal(result.failed, 0, JSON.stringify(result.failures));
    assert.ok(result.sent >= 1000, `only ${result.sent} requests: the load did not flow`);
    assert.equal(relisted, 1, "exactly one relist");
    assert.equal(await logged("registry not answering"), 1, "one warning going away");
    assert.equal(await logged("registry answering again"), 1, "one line coming back");
    assert.equal(await logged("registry history compacted past the watch"), 1);
  } finally {
    await load?.stop();
    await stopAgentAndEnvoy(agent, stateDir);
    await writer.stop();
    gate.close();
    for (const e of Object.values(echos)) await e.close();
    await etcd.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
