/**
 * xDS fan-out benchmark: one agent (bench/xds_fanout_server.ts, its own process) serving `nodes`
 * delta ADS clients over real gRPC, each a node proxy with its own dependency set (svc-0 in every
 * set plus `setSize - 1` random services of `services`), spread over `channels` HTTP/2
 * connections, ACKing every response like Envoy. Measures, from the change command to receipt:
 * - a producer route edit on svc-0 (affects all nodes; must arrive as one VirtualHost each);
 * - an endpoint change on svc-0 (all nodes; EDS);
 * - a route edit on a random other service (only the nodes holding it).
 * For each: time until the last affected client has it (p50/p99 over changes) and each client's
 * own latency (p99 over every change × client); plus the agent's RSS, peak RSS and CPU.
 *
 *   deno run -A bench/xds_fanout.ts [services=1000] [nodes=1000] [setSize=20] [changes=20] [channels=100]
 *
 * Prints one JSON line. The clients share this process (one core's worth of JS at most), so on a
 * 2-core machine their own receive/ACK work is part of the measured time.
 * @module
 */
import { fileURLToPath } from "node:url";
import readline from "node:readline";
import { Readable } from "node:stream";
import { lcg } from "../testbed/fixtures/lcg.ts";
import { fanoutSets } from "./xds_fanout_sets.ts";
import { TypeUrl } from "../agent/xds/proto.ts";
import {
  type AdsClient,
  adsClient,
  type AdsStream,
  nodeStream,
  type Received,
} from "./mesh_ads.ts";

const [services, nodes, setSize, changes, channels] = [1000, 1000, 20, 20, 100].map((d, i) =>
  Number(Deno.args[i] ?? d)
);
const sets = fanoutSets(services, nodes, setSize);

const agent = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    "-A",
    ...(Deno.env.get("AETHER_BENCH_CPU_PROF")
      ? ["--cpu-prof", `--cpu-prof-dir=${Deno.env.get("AETHER_BENCH_CPU_PROF")}`]
      : []),
    fileURLToPath(new URL("./xds_fanout_server.ts", import.meta.url)),
    ...[services, nodes, setSize].map(String),
  ],
  stdin: "piped",
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const replies = readline.createInterface({
  // deno-lint-ignore no-explicit-any
  input: Readable.fromWeb(agent.stdout as any),
})[Symbol.asyncIterator]();
const writer = agent.stdin.getWriter();
const reply = async () =>
  JSON.parse(String((await replies.next()).value)) as Record<string, number>;
const { port, setupMs } = await reply();

/** utime + stime of the agent in ms, and its RSS / peak RSS in MiB, from /proc. */
function agentStats(): { cpuMs: number; rssMiB: number; hwmMiB: number } {
  const stat = Deno.readTextFileSync(`/proc/${agent.pid}/stat`);
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const ticks = Number(f[11]) + Number(f[12]); // utime, stime (fields 14, 15)
  const status = Deno.readTextFileSync(`/proc/${agent.pid}/status`);
  const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { cpuMs: ticks * 10, rssMiB: kb("VmRSS") / 1024, hwmMiB: kb("VmHWM") / 1024 };
}

// Its own connection per channel (grpc-js shares subchannels across channels by default).
const clients: AdsClient[] = Array.from(
  { length: channels },
  () => adsClient(port, { "grpc.use_local_subchannel_pool": 1 }),
);
const received: Received[][] = [];
const streams: AdsStream[] = [];
for (let n = 0; n < nodes; n++) {
  const log: Received[] = [];
  received.push(log);
  streams.push(nodeStream(clients[n % channels], n, log));
}
const until = async (what: string, check: () => boolean, ms: number) => {
  const deadline = performance.now() + ms;
  while (!check()) {
    if (performance.now() > deadline) throw new Error(`timed out: ${what}`);
    await new Promise((r) => setTimeout(r, 2));
  }
};
const warmStart = performance.now();
await until(
  "every client warm",
  () =>
    received.every((l) =>
      [TypeUrl.cluster, TypeUrl.endpoint, TypeUrl.listener, TypeUrl.route, TypeUrl.virtualHost]
        .every((t) => l.some((r) => r.type === t))
    ),
  300000,
);
const warmMs = performance.now() - warmStart;
await new Promise((r) => setTimeout(r, 1000));
const warmStats = agentStats();

let version = 0;
async function change(kind: "route" | "endpoint", svc: number) {
  const authority = `svc-${svc}.aether.internal`;
  const affected = sets.map((s, n) => (s.includes(authority) ? n : -1)).filter((n) => n >= 0);
  const want = kind === "route" ? TypeUrl.virtualHost : TypeUrl.endpoint;
  const marks = received.map((l) => l.length);
  const start = performance.now();
  await writer.write(
    new TextEncoder().encode(JSON.stringify({ [kind]: svc, v: ++version }) + "\n"),
  );
  const applied = await reply() as { resolveMs: number; applyMs: number };
  await until(
    `${kind} change on svc-${svc}`,
    () => affected.every((n) => received[n].slice(marks[n]).some((r) => r.type === want)),
    60000,
  );
  const per = affected.map((n) =>
    received[n].slice(marks[n]).find((r) => r.type === want)!.at - start
  );
  await new Promise((r) => setTimeout(r, 50));
  const others: Record<string, number> = {};
  received.forEach((l, n) =>
    l.slice(marks[n]).filter((r) => r.type !== want).forEach((r) => {
      const t = r.type.slice(r.type.lastIndexOf(".") + 1);
      others[t] = (others[t] ?? 0) + 1;
    })
  );
  return { all: Math.max(...per), per, affected: affected.length, others, ...applied };
}

const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const r1 = (x: number) => +x.toFixed(1);
const result: Record<string, unknown> = {
  services,
  nodes,
  setSize,
  changes,
  channels,
  setupMs,
  warmMs: Math.round(warmMs),
  agentRssWarmMiB: Math.round(warmStats.rssMiB),
};
const rnd = lcg(4242);
const cases = [
  ["routeAll", "route", () => 0],
  ["endpointAll", "endpoint", () => 0],
  ["routeSome", "route", () => 1 + Math.floor(rnd() * (services - 1))],
] as const;
for (const [name, kind, pick] of cases) {
  const before = agentStats();
  const t = performance.now();
  const samples = [];
  for (let i = 0; i < changes; i++) samples.push(await change(kind, pick()));
  const after = agentStats();
  const all = samples.map((s) => s.all), per = samples.flatMap((s) => s.per);
  result[name] = {
    allP50Ms: r1(pct(all, 50)),
    allP99Ms: r1(pct(all, 99)),
    perClientP50Ms: r1(pct(per, 50)),
    perClientP99Ms: r1(pct(per, 99)),
    resolveP50Ms: r1(pct(samples.map((s) => s.resolveMs), 50)),
    applyP50Ms: r1(pct(samples.map((s) => s.applyMs), 50)),
    affectedAvg: r1(samples.reduce((a, s) => a + s.affected, 0) / samples.length),
    otherTypeResponses: samples.reduce((acc, s) => {
      for (const [t, k] of Object.entries(s.others)) acc[t] = (acc[t] ?? 0) + k;
      return acc;
    }, {} as Record<string, number>),
    agentCpuPct: Math.round((after.cpuMs - before.cpuMs) / (performance.now() - t) * 100),
    // CPU time the agent spent per change (less sensitive to a shared machine than wall time).
    agentCpuMsPerChange: Math.round((after.cpuMs - before.cpuMs) / changes),
  };
}
const end = agentStats();
result.agentRssMiB = Math.round(end.rssMiB);
result.agentPeakRssMiB = Math.round(end.hwmMiB);
result.load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
for (const s of streams) s.end();
for (const c of clients) c.close();
await writer.close();
await agent.status;
console.log(JSON.stringify(result));
Deno.exit(0);
