/**
 * The standalone edge's start-up: Envoy is launched beside the first revision (it connects to the
 * already listening xDS server before there is any config), no MeshIR without a DNS responder,
 * the bootstrap's stats on first use (`--envoy-eager-stats` off), process metrics on `/metrics`,
 * and a failed start (a missing `--config` path) says why and leaves nothing running.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Logger } from "../../lib/log/mod.ts";
import { FileSource } from "../../lib/source/files/mod.ts";
import type { Source } from "../../lib/source/mod.ts";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { freePort } from "../../testbed/free_port.ts";
import { recordedEnvoy, statePaths } from "../envoy/mod.ts";
import { limitsFromFlags } from "../limits_flags.ts";
import { runStandalone, standaloneDefaults } from "./mod.ts";

const quiet = new Logger("agent", () => {}, "error");

const config = (port: number) => `
apiVersion: gateway.networking.k8s.io/v1
kind: GatewayClass
metadata: { name: aether }
spec: { controllerName: gateway.aether.io/edge }
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: { name: gw, namespace: default }
spec:
  gatewayClassName: aether
  listeners: [{ name: http, protocol: HTTP, port: ${port} }]
---
apiVersion: v1
kind: Service
metadata: { name: app, namespace: default }
spec: { clusterIP: 10.96.0.10, ports: [{ name: http, port: 8080 }] }
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: edge, namespace: default }
spec:
  parentRefs: [{ name: gw }]
  rules: [{ backendRefs: [{ name: app, port: 8080 }] }]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: { name: mesh, namespace: default }
spec:
  parentRefs: [{ group: "", kind: Service, name: app, port: 8080 }]
  rules: [{ backendRefs: [{ name: app, port: 8080 }] }]
`;

async function configDir(): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "aether-start-test-" });
  await Deno.writeTextFile(join(dir, "config.yaml"), config(freePort()));
  return dir;
}

/** Polls `check` until truthy; fails after `ms` (generous: the machine may be busy). */
async function until<T>(
  what: string,
  check: () => Promise<T | undefined>,
  ms = 120_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A source whose first revision waits until `release()`. */
function gated(inner: Source): Source & { release(): void; asked: Promise<void> } {
  let release!: () => void, asked!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const askedP = new Promise<void>((r) => (asked = r));
  return {
    release,
    asked: askedP,
    start: async (onRevision) => {
      asked();
      await gate;
      await inner.start(onRevision);
    },
    stop: () => inner.stop(),
  };
}

Deno.test({
  name: "standalone: Envoy connects to the xDS server before the first revision exists",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await configDir();
    const admin = `127.0.0.1:${freePort()}`;
    const nodeId = `start-test-${crypto.randomUUID().slice(0, 8)}`;
    const source = gated(new FileSource({ path: dir, watch: false }));
    const starting = runStandalone({
      ...standaloneDefaults,
      envoy: await ensurePeer("envoy"),
      source,
      adminAddress: admin,
      xdsAddress: "127.0.0.1:0",
      dnsAddress: "none",
      nodeId,
      logger: quiet,
    });
    starting.catch(() => {});
    try {
      await source.asked;
      // No revision yet, and Envoy's ADS stream is open (the xDS server listened first).
      const streams = await until("Envoy's xDS stream before any config", async () => {
        const r = await fetch(`http://${admin}/debug/xds`);
        const doc = await r.json() as { streams: unknown[] };
        return doc.streams.length > 0 ? doc.streams : undefined;
      });
      assert.equal(streams.length, 1, JSON.stringify(streams));
      const ready = await fetch(`http://${admin}/readyz`);
      assert.equal(ready.status, 503);
      assert.match(await ready.text(), /no configuration yet/);
    } finally {
      source.release();
    }
    const agent = await starting;
    try {
      await agent.waitReady(120_000);
      // The bootstrap Envoy runs: cluster stats on first use (no --envoy-eager-stats).
      const bootstrap = JSON.parse(await Deno.readTextFile(statePaths(agent.stateDir).bootstrap));
      assert.deepEqual(bootstrap.deferred_stat_options, { enable_deferred_creation_stats: true });
      // The agent's own process metrics on /metrics.
      const metrics = await (await fetch(`http://${admin}/metrics`)).text();
      for (
        const name of [
          "process_resident_memory_bytes",
          "process_cpu_seconds_total",
          "process_start_time_seconds",
          "deno_heap_used_bytes",
          "deno_heap_total_bytes",
        ]
      ) assert.match(metrics, new RegExp(`^${name} \\d`, "m"), name);
    } finally {
      await agent.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

Deno.test({
  name: "standalone: --envoy-eager-stats writes a bootstrap without deferred stats",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const flags = limitsFromFlags({ "envoy-eager-stats": true });
    assert.equal(flags.envoyEagerStats, true);
    assert.equal(limitsFromFlags({}).envoyEagerStats, false);
    const dir = await configDir();
    const agent = await runStandalone({
      ...standaloneDefaults,
      ...flags,
      envoy: await ensurePeer("envoy"),
      config: dir,
      adminAddress: "127.0.0.1:0",
      xdsAddress: "127.0.0.1:0",
      dnsAddress: "none",
      nodeId: `start-test-${crypto.randomUUID().slice(0, 8)}`,
      logger: quiet,
    });
    try {
      await agent.waitReady(120_000);
      const bootstrap = JSON.parse(await Deno.readTextFile(statePaths(agent.stateDir).bootstrap));
      assert.equal("deferred_stat_options" in bootstrap, false);
    } finally {
      await agent.close();
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** The `meshServices` of the agent's "config applied" log line for the config, DNS on or off. */
async function meshServices(dnsAddress: string): Promise<number> {
  const dir = await configDir();
  const lines: string[] = [];
  const agent = await runStandalone({
    ...standaloneDefaults,
    envoy: "none",
    config: dir,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress,
    nodeId: `start-test-${crypto.randomUUID().slice(0, 8)}`,
    logger: new Logger("agent", (l) => lines.push(l), "info"),
  });
  try {
    // Applied before runStandalone resolves, unless a CEL rule made it wait for the library.
    const applied = await until(
      "the config applied",
      () =>
        Promise.resolve(lines.map((l) => JSON.parse(l)).find((l) => l.msg === "config applied")),
    );
    assert.equal(applied.problems, 0, lines.join("\n"));
    return applied.meshServices;
  } finally {
    await agent.close();
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test({
  name: "standalone: the MeshIR is built only for a DNS responder",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    assert.equal(await meshServices("127.0.0.1:0"), 1);
    assert.equal(await meshServices("none"), 0);
  },
});

Deno.test({
  name: "standalone: a missing --config path is refused by name and nothing is left running",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dir = await Deno.makeTempDir({ prefix: "aether-start-test-" });
    const stateDir = join(dir, "state");
    const missing = join(dir, "no-such-config");
    const admin = freePort(), xds = freePort();
    const envoy = await ensurePeer("envoy");
    await assert.rejects(
      () =>
        runStandalone({
          ...standaloneDefaults,
          envoy,
          config: missing,
          stateDir,
          adminAddress: `127.0.0.1:${admin}`,
          xdsAddress: `127.0.0.1:${xds}`,
          dnsAddress: "none",
          nodeId: `start-test-${crypto.randomUUID().slice(0, 8)}`,
          logger: quiet,
        }),
      new RegExp(`config path ${missing} does not exist: .*--config`),
    );
    try {
      // The Envoy launched beside the source is stopped, its record gone; the ports are free.
      assert.equal(await recordedEnvoy(stateDir), undefined);
      for (const port of [admin, xds]) Deno.listen({ hostname: "127.0.0.1", port }).close();
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
