/**
 * Edge memory: the standalone edge (`agent standalone`, a real Envoy, `--dns-address none` as
 * in-cluster edges run) on the load bench's config (1 Gateway, 5,000 Services + EndpointSlices,
 * N HTTPRoutes), once Envoy has ACKed it: Envoy's RSS and its allocator's view (admin `/memory`),
 * the agent's RSS and V8 heap (its `/metrics`), Envoy's stats (all, and those of one idle cluster)
 * and the clusters its workers created, for each mode: a name and the agent flags it adds. By
 * default the agent's defaults and `--envoy-eager-stats`; `--mode "name=flag flag"` (repeatable)
 * names others, e.g. `--mode "before=--envoy-all-stats --envoy-eager-clusters" --mode default=`.
 * A mode's `--v8-flags=…` replaces the task's V8 flags for the agent (e.g.
 * `--mode "lite=--v8-flags=--max-semi-space-size=4,--lite-mode"`); a mode's `ENV:NAME=value` sets
 * an environment variable of the agent (e.g. `--mode "arena2=ENV:MALLOC_ARENA_MAX=2"`).
 * The modes alternate over the rounds (the first of a round rotates); each figure is the median
 * of its rounds. `--traffic n`: before the reading, n requests through Envoy over 16 connections,
 * each walking the routes' hosts from its own offset (n = 16 × routes: every connection, so every
 * worker, meets every host; a worker makes the clusters it serves), every endpoint then an echo
 * server in this process (without traffic nothing listens at the endpoints).
 *
 *   deno run -A bench/edge_memory.ts [--routes 1000] [--services 5000] [--rounds 3] [--mode "n=f …"]
 *     [--traffic n]
 *
 * The agent runs with the V8 flags of the `agent` task in deno.json (the way users start it).
 * Prints one JSON line per run, a Markdown table, and a last JSON line with every figure.
 * @module
 */
import http from "node:http";
import { parseArgs } from "node:util";
import { join } from "node:path";
import { stringify } from "yaml";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { freePort } from "../testbed/free_port.ts";
import { syntheticConfig } from "../testbed/fixtures/synthetic_config.ts";
import { startEcho } from "../e2e/echo/server.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    routes: { type: "string", default: "1000" },
    services: { type: "string", default: "5000" },
    rounds: { type: "string", default: "3" },
    mode: { type: "string", multiple: true },
    traffic: { type: "string", default: "0" },
  },
});
/** Each mode's name and agent flags. */
const modes: { name: string; flags: string[] }[] =
  (values.mode?.length ? values.mode : ["default=", "eager-stats=--envoy-eager-stats"]).map((m) => {
    const [name, flags = ""] = m.split(/=(.*)/s);
    return { name, flags: flags.split(/\s+/).filter(Boolean) };
  });
const routes = Number(values.routes), services = Number(values.services);
const rounds = Number(values.rounds);
const traffic = Number(values.traffic);
const listenerPort = freePort();
const envoy = await ensurePeer("envoy");
const agentMain = new URL("../agent/main.ts", import.meta.url).pathname;
const agentTask: string = JSON.parse(
  await Deno.readTextFile(new URL("../deno.json", import.meta.url)),
).tasks.agent;
const v8Flags = agentTask.split(/\s+/).filter((a) => a.startsWith("--v8-flags="));
const MiB = 2 ** 20;

/** VmRSS (or another `/proc/<pid>/status` field, e.g. RssAnon) of a process, in MiB. */
async function rssMiB(pid: number, field = "VmRSS"): Promise<number> {
  const status = await Deno.readTextFile(`/proc/${pid}/status`);
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? Number.NaN) / 1024;
}

/** One metric's value from a Prometheus text exposition. */
function metric(text: string, name: string): number {
  return Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
}

const round1 = (x: number) => Math.round(x * 10) / 10;

interface Run {
  mode: string;
  readyS: number;
  envoyRssMiB: number;
  /** Anonymous memory (RSS less the binary's and libraries' file pages). */
  envoyAnonMiB: number;
  envoyAllocatedMiB: number;
  envoyHeapMiB: number;
  envoyStats: number;
  /** Stats under `cluster.<name>.` of the idle cluster with the fewest (none used). */
  idleClusterStats: number;
  /** Clusters Envoy's first worker has created (`thread_local_cluster_manager.worker_0`). */
  workerClusters: number;
  agentRssMiB: number;
  agentAnonMiB: number;
  agentHeapUsedMiB: number;
}

/** `n` requests to the routes' hosts in turn, 16 at a time, each on its own kept-alive socket. */
async function sendTraffic(n: number): Promise<void> {
  const pools = Array.from(
    { length: 16 },
    () => new http.Agent({ keepAlive: true, maxSockets: 1 }),
  );
  const get = (host: string, agent: http.Agent) =>
    new Promise<void>((done) => {
      const req = http.get(
        { host: "127.0.0.1", port: listenerPort, path: "/", headers: { host }, agent },
        (res) => res.resume().on("end", done),
      );
      req.on("error", () => done());
    });
  try {
    // Connection j walks the hosts from its own offset: with n ≥ 16 × routes each one meets all.
    for (let k = 0; k * pools.length < n; k++) {
      await Promise.all(
        pools.map((a, j) => get(`app-${(k + j * 61) % routes}.example.com`, a)),
      );
    }
  } finally {
    pools.forEach((a) => a.destroy());
  }
}

/** Starts the edge, waits for /readyz, lets it settle, reads memory, stops it. */
async function run(file: string, dir: string, mode: (typeof modes)[number]): Promise<Run> {
  const admin = freePort();
  const state = join(dir, `state-${admin}`);
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      ...(mode.flags.some((f) => f.startsWith("--v8-flags="))
        ? mode.flags.filter((f) => f.startsWith("--v8-flags="))
        : v8Flags),
      agentMain,
      "standalone",
      ...["--config", file, "--envoy", envoy, "--admin-address", `127.0.0.1:${admin}`],
      ...["--xds-address", "127.0.0.1:0", "--dns-address", "none", "--state-dir", state],
      ...["--node-id", `edgemem-${admin}`],
      ...mode.flags.filter((f) => !f.startsWith("--v8-flags=") && !f.startsWith("ENV:")),
    ],
    stdout: "null",
    stderr: "null",
    env: {
      AETHER_LOG_LEVEL: "error",
      ...Object.fromEntries(
        mode.flags.filter((f) => f.startsWith("ENV:")).map((f) => f.slice(4).split(/=(.*)/s, 2)),
      ),
    },
  }).spawn();
  try {
    const base = `http://127.0.0.1:${admin}`;
    for (;;) {
      const r = await fetch(`${base}/readyz`).catch(() => undefined);
      await r?.body?.cancel();
      if (r?.status === 200) break;
      if (performance.now() - started > 600_000) throw new Error("not ready after 600 s");
      await new Promise((res) => setTimeout(res, 50));
    }
    const readyS = (performance.now() - started) / 1000;
    // The record gets Envoy's admin address once the agent has read it back from Envoy.
    let record = JSON.parse(await Deno.readTextFile(join(state, "envoy.json")));
    while (!record.adminAddress) {
      await new Promise((res) => setTimeout(res, 100));
      record = JSON.parse(await Deno.readTextFile(join(state, "envoy.json")));
    }
    const envoyAdmin = `http://${record.adminAddress}`;
    if (traffic > 0) await sendTraffic(traffic);
    // Settled: the agent's post-start garbage collected, Envoy's clusters warmed. Polled until
    // two readings 2 s apart differ by under 1 MiB each (at most a minute).
    let last = { envoy: 0, agent: 0 };
    for (let i = 0; i < 30; i++) {
      await new Promise((res) => setTimeout(res, 2000));
      const now = { envoy: await rssMiB(record.pid), agent: await rssMiB(child.pid) };
      const steady = Math.abs(now.envoy - last.envoy) < 1 && Math.abs(now.agent - last.agent) < 1;
      last = now;
      if (steady) break;
    }
    const memory = await (await fetch(`${envoyAdmin}/memory`)).json();
    const stats = await (await fetch(`${envoyAdmin}/stats`)).text();
    const agentMetrics = await (await fetch(`${base}/metrics`)).text();
    // Each stat under `cluster.` counted to the cluster whose name is its longest dotted prefix.
    const { cluster_statuses } = await (await fetch(`${envoyAdmin}/clusters?format=json`))
      .json() as { cluster_statuses: { name: string }[] };
    const perCluster = new Map(cluster_statuses.map((c) => [c.name, 0]));
    for (const line of stats.split("\n")) {
      if (!line.startsWith("cluster.")) continue;
      const parts = line.slice("cluster.".length).split(":")[0].split(".");
      for (let n = parts.length - 1; n > 0; n--) {
        const name = parts.slice(0, n).join(".");
        const count = perCluster.get(name);
        if (count !== undefined) {
          perCluster.set(name, count + 1);
          break;
        }
      }
    }
    return {
      mode: mode.name,
      readyS: Math.round(readyS * 100) / 100,
      envoyRssMiB: round1(await rssMiB(record.pid)),
      envoyAnonMiB: round1(await rssMiB(record.pid, "RssAnon")),
      envoyAllocatedMiB: round1(Number(memory.allocated) / MiB),
      envoyHeapMiB: round1(Number(memory.heap_size) / MiB),
      envoyStats: stats.trim().split("\n").length,
      idleClusterStats: Math.min(...perCluster.values()),
      workerClusters: Number(
        /^thread_local_cluster_manager\.worker_0\.clusters_inflated: (\d+)/m.exec(stats)?.[1] ??
          Number.NaN,
      ),
      agentRssMiB: round1(metric(agentMetrics, "process_resident_memory_bytes") / MiB),
      agentAnonMiB: round1(await rssMiB(child.pid, "RssAnon")),
      agentHeapUsedMiB: round1(metric(agentMetrics, "deno_heap_used_bytes") / MiB),
    };
  } finally {
    child.kill("SIGTERM");
    await child.status;
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : round1((s[s.length / 2 - 1] + s[s.length / 2]) / 2);
};

const dir = await Deno.makeTempDir({ prefix: "aether-edgemem-" });
const runs: Run[] = [];
let echo: Awaited<ReturnType<typeof startEcho>> | undefined;
try {
  const file = join(dir, `routes-${routes}.yaml`);
  // With traffic, every endpoint is a real echo server (Envoy's workers then hold real upstream
  // connections, as under load); without, nothing listens there (the memory of the config alone).
  echo = traffic > 0 ? await startEcho("edgemem", "127.0.0.1", 0) : undefined;
  const objects = syntheticConfig({
    services,
    routes,
    port: listenerPort,
    ...(echo ? { endpointPort: echo.port } : {}),
  });
  await Deno.writeTextFile(file, objects.map((o) => stringify(o)).join("---\n"));
  for (let r = 0; r < rounds; r++) {
    // The first mode rotates, so none always runs on a cold page cache.
    const order = modes.map((_, i) => modes[(i + r) % modes.length]);
    for (const mode of order) {
      const one = await run(file, dir, mode);
      console.log(JSON.stringify(one));
      runs.push(one);
    }
  }
} finally {
  await echo?.close();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
const keys = [
  "readyS",
  "envoyRssMiB",
  "envoyAnonMiB",
  "envoyAllocatedMiB",
  "envoyHeapMiB",
  "envoyStats",
  "idleClusterStats",
  "workerClusters",
  "agentRssMiB",
  "agentAnonMiB",
  "agentHeapUsedMiB",
] as const;
const summary = Object.fromEntries(
  modes.map(({ name }) => [
    name,
    Object.fromEntries(
      keys.map((k) => [k, median(runs.filter((x) => x.mode === name).map((x) => x[k]))]),
    ),
  ]),
) as Record<string, Record<(typeof keys)[number], number>>;
const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
console.log(
  `\nStandalone edge, ${routes} HTTPRoutes, ${services} Services, ready` +
    `${traffic ? `, ${traffic} requests,` : ""} and settled; median of ` +
    `${rounds} runs per mode; load average at the end ${load}`,
);
console.log(
  "\n| mode (agent flags) | Envoy RSS / anon MiB | Envoy allocated / heap MiB | Envoy stats | idle cluster's stats | clusters on worker 0 | agent RSS / anon MiB | agent V8 heap used MiB | start → ready s |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
for (const { name, flags } of modes) {
  const s = summary[name];
  console.log(
    `| ${name} (${
      flags.join(" ") || "defaults"
    }) | ${s.envoyRssMiB} / ${s.envoyAnonMiB} | ${s.envoyAllocatedMiB} / ${s.envoyHeapMiB} | ${s.envoyStats} | ${s.idleClusterStats} | ${s.workerClusters} | ${s.agentRssMiB} / ${s.agentAnonMiB} | ${s.agentHeapUsedMiB} | ${s.readyS} |`,
  );
}
console.log(
  JSON.stringify({ bench: "edgemem", routes, services, rounds, traffic, load, ...summary }),
);
