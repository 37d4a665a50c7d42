/**
 * Transparent capture's hop on real Envoy 1.40 with CNI bridge pods (issue 18): a node agent
 * (`runNode` in process with `capture: true`: each pod's `inet aether` table through libnftables,
 * a capture listener 127.0.0.1:15001 in each pod netns) and its node proxy; a client pod, and a
 * server pod running echo-basic (the Gateway API conformance echo server, native Go) on :3000
 * (Service `echo`, VIP:8080, appProtocol http) and :3002 (Service `echo-tcp`, VIP:9000,
 * appProtocol tcp). The load is fortio (native, paced: `fortio load -qps <qps> -c <c> -t <s>s`)
 * inside the client pod's netns. Modes, same agent, same pods, in ABBA order over `--rounds`
 * rounds with a warm-up before each measured window:
 * - `direct`: client → the server pod's IP:3000, no mesh;
 * - `lane`: client → 127.0.0.1:18081 with `Host: echo.aether.internal:8080` (the mesh-aware lane);
 * - `captured`: client → echo's VIP:8080, redirected by the pod's table to the capture listener
 *   (original_dst → the port's HTTP chain: HCM with its GAMMA routes) → the server pod;
 * - `tcp-direct`: client → the server pod's IP:3002, no mesh;
 * - `tcp-floor`: client → echo-tcp's VIP:9000: the capture listener's TCP floor (tcp_proxy, no
 *   HCM, no inspector) → :3002. The fortio peer is the project's trimmed build (HTTP load only),
 *   so the TCP modes carry its HTTP/1.1 keep-alive requests as opaque bytes.
 * Per window: fortio's histogram (p50/p90/p99/p99.9 at 10 µs resolution, achieved rate) and the
 * node proxy's CPU time and run-queue wait (schedstat). Then node agent memory with 0 and with
 * `--pods` captured pods (bench/capture_memory.ts, its own process; capture on, then off for
 * comparison), and a pod's CNI ADD with and without aether's plugin in the chain
 * (bench/capture_add.ts, its own process). Prints one JSON line; every netns, process and temp
 * file goes, also on failure.
 *
 *   deno run -A bench/capture_hop.ts [--qps 500] [--connections 8] [--seconds 10] [--warmup 2]
 *     [--rounds 3 (0: memory only)] [--modes direct,lane,captured,tcp-direct,tcp-floor]
 *     [--pods 100 (0: no memory run)] [--services 10 (mesh Services in the memory run)]
 *     [--adds 20 (0: no pod ADD run)]
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { createPodNetwork, type NetPod, type PodNetwork } from "../e2e/netns.ts";
import { waitFor } from "../e2e/peers/proc.ts";
import { netPodObject } from "../e2e/identity_harness.ts";
import {
  type FortioSummary,
  fortioSummary,
  hopPercentiles,
  median,
  roundUs,
} from "./latency_hist.ts";
import { readSchedstat, schedWindow } from "./schedstat.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    qps: { type: "string", default: "500" },
    connections: { type: "string", default: "8" },
    seconds: { type: "string", default: "10" },
    warmup: { type: "string", default: "2" },
    rounds: { type: "string", default: "3" },
    modes: { type: "string", default: "direct,lane,captured,tcp-direct,tcp-floor" },
    pods: { type: "string", default: "100" },
    services: { type: "string", default: "10" },
    adds: { type: "string", default: "20" },
  },
});
const qps = Number(values.qps), conns = Number(values.connections);
const seconds = Number(values.seconds), warmup = Number(values.warmup);
const rounds = Number(values.rounds), memoryPods = Number(values.pods);
const MODES = ["direct", "lane", "captured", "tcp-direct", "tcp-floor"] as const;
type Mode = typeof MODES[number];
const modes = values.modes!.split(",") as Mode[];
for (const m of modes) {
  if (!MODES.includes(m)) throw new Error(`--modes: unknown mode ${m} (${MODES.join(", ")})`);
}
/** Each mode's baseline: the same server port without the mesh. */
const BASELINE: Partial<Record<Mode, Mode>> = {
  lane: "direct",
  captured: "direct",
  "tcp-floor": "tcp-direct",
};

const NODE = "node-1";
/** The Services' VIPs (RFC 2544 benchmark range: no cluster's, reached only through capture). */
const VIP = { http: "198.18.77.10", tcp: "198.18.77.11" } as const;
/** echo-basic's HTTP ports in the server pod: one behind each Service. */
const PORT = { http: 3000, tcp: 3002 } as const;

/** A Service with a ClusterIP (one port → `targetPort`) and its EndpointSlice over `ip`. */
function vipService(
  name: string,
  vip: string,
  port: number,
  targetPort: number,
  appProtocol: string,
  ip: string,
): SourceObject[] {
  const namespace = "bench";
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        clusterIP: vip,
        clusterIPs: [vip],
        ports: [{ name: "p", port, targetPort, protocol: "TCP", appProtocol }],
      },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "p", port: targetPort, protocol: "TCP", appProtocol }],
      endpoints: [{ addresses: [ip], conditions: { ready: true } }],
    },
  ];
}

/** Where each mode sends fortio's requests. */
function target(mode: Mode, server: NetPod): { url: string; host?: string } {
  switch (mode) {
    case "direct":
      return { url: `http://${server.ip}:${PORT.http}/` };
    case "lane":
      return { url: "http://127.0.0.1:18081/", host: "echo.aether.internal:8080" };
    case "captured":
      return { url: `http://${VIP.http}:8080/` };
    case "tcp-direct":
      return { url: `http://${server.ip}:${PORT.tcp}/` };
    case "tcp-floor":
      return { url: `http://${VIP.tcp}:9000/` };
  }
}

/** Runs fortio in `pod`'s netns against `mode`'s target; returns its summary. */
async function fortio(
  pod: NetPod,
  server: NetPod,
  mode: Mode,
  rate: number,
  secs: number,
): Promise<FortioSummary> {
  const bin = await ensurePeer("fortio");
  const file = await Deno.makeTempFile({ prefix: "aether-fortio-", suffix: ".json" });
  try {
    const t = target(mode, server);
    const args = [`--net=${pod.netnsPath}`, bin, "load", "-qps", String(rate), "-c", String(conns)];
    args.push("-t", `${secs}s`, "-p", "50,90,99,99.9", "-json", file);
    if (t.host) args.push("-H", `Host: ${t.host}`);
    args.push(t.url);
    const out = await new Deno.Command("nsenter", { args, stdout: "piped", stderr: "piped" })
      .output();
    if (!out.success) throw new Error(`fortio failed: ${new TextDecoder().decode(out.stderr)}`);
    return fortioSummary(await Deno.readTextFile(file));
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/** echo-basic on `port` inside `pod` (its per-request log line goes to /dev/null). */
async function echoBasic(pod: NetPod, port: number): Promise<Deno.ChildProcess> {
  const bin = await ensurePeer("echo-basic");
  return new Deno.Command("nsenter", {
    args: [`--net=${pod.netnsPath}`, bin],
    env: { HTTP_PORT: String(port), H2C_PORT: String(port + 1), POD_NAME: "echo-0" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
}

/** Runs a bench script of this folder in its own process; its last stdout line, parsed. */
async function child(script: string, args: string[]): Promise<Record<string, unknown>> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL(script, import.meta.url).pathname,
      ...args,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`${script} failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(text.split("\n").pop()!);
}

/** Agent memory for `pods` pods (bench/capture_memory.ts). */
const memoryRun = (pods: number, capture: boolean) =>
  child("./capture_memory.ts", [
    ...["--pods", String(pods), "--services", values.services!, `--capture=${capture}`],
  ]);

let net: PodNetwork | undefined;
let node: NodeAgent | undefined;
const servers: Deno.ChildProcess[] = [];
let cleaned: Promise<void> | undefined;
/** Stops the agent (and its Envoy) and the servers, removes the pods; once. */
const cleanup = () =>
  cleaned ??= (async () => {
    await node?.close().catch(() => {});
    for (const s of servers) {
      try {
        s.kill("SIGKILL");
      } catch { /* gone */ }
      await s.status;
    }
    await net?.remove();
  })();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, () => cleanup().finally(() => Deno.exit(130)));
}

let captureStats: Record<string, number> = {};
type Run = Awaited<ReturnType<typeof measureRounds>>[number];

/** The latency rounds (none with `--rounds 0`). */
async function measureRounds() {
  if (rounds === 0) return [];
  net = await createPodNetwork();
  const client = await net.addPod("aether-capc"), server = await net.addPod("aether-caps");
  servers.push(await echoBasic(server, PORT.http), await echoBasic(server, PORT.tcp));
  node = await runNode({
    ...nodeDefaults,
    source: new MemorySource([
      netPodObject(client, "client", "client-0", "client", NODE),
      netPodObject(server, "bench", "echo-0", "echo", NODE),
      ...vipService("echo", VIP.http, 8080, PORT.http, "http", server.ip),
      ...vipService("echo-tcp", VIP.tcp, 9000, PORT.tcp, "tcp", server.ip),
    ]),
    nodeName: NODE,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    capture: true,
    logger: new Logger("bench", () => {}),
  });
  const agent = node;
  // Both pods' tables in place and their capture listeners served by the node proxy.
  await waitFor("both pods captured", async () => {
    const res = await fetch(`http://${agent.admin.address}/debug/capture`);
    const doc = await res.json() as { pods: { state: string; listenerServed: boolean }[] };
    const ok = doc.pods.length === 2 &&
      doc.pods.every((p) => p.state === "captured" && p.listenerServed);
    return ok ? true : undefined;
  }, 90_000);
  for (const m of modes) {
    await waitFor(`${m} answers`, async () => {
      const r = await fortio(client, server, m, 20, 1);
      return r.failed === 0 && r.count > 0 ? true : undefined;
    }, 60_000);
  }
  const envoyPid = agent.envoy!.pid!;
  const measure = async (mode: Mode, round: number) => {
    await fortio(client, server, mode, qps, warmup);
    const load0 = Deno.loadavg()[0];
    const s0 = await readSchedstat(envoyPid);
    const f = await fortio(client, server, mode, qps, seconds);
    const sched = schedWindow(s0, await readSchedstat(envoyPid));
    const load1 = Deno.loadavg()[0];
    const { buckets, ...rest } = f;
    const pct = hopPercentiles(buckets);
    const cpuUs = Math.round((sched.cpuMs * 1000) / Math.max(1, f.count));
    console.error(
      `[capture] round ${round} ${mode}: ${f.actualQps} req/s, ${f.failed} failed, p50 ${pct.p50}` +
        ` / p99 ${pct.p99} ms, load ${load0.toFixed(1)}→${load1.toFixed(1)}, Envoy ${cpuUs} ` +
        `µs/request, run-queue wait ${sched.waitPerSliceUs} µs per wake-up`,
    );
    return {
      mode,
      round,
      load: [roundUs(load0), roundUs(load1)],
      ...rest,
      ...pct,
      buckets,
      envoyCpuUsPerRequest: cpuUs,
      envoyWaitPerWakeupUs: sched.waitPerSliceUs,
    };
  };
  const runs = [];
  for (let r = 0; r < rounds; r++) {
    // ABBA over every mode: forward in even rounds, backward in odd ones.
    for (const m of r % 2 === 0 ? modes : [...modes].reverse()) runs.push(await measure(m, r));
  }
  // The capture listener's own counters: the captured modes went through it.
  const stats = JSON.parse(await agent.envoy!.admin("/stats?format=json&filter=aether_capture_"));
  captureStats = Object.fromEntries(
    (stats.stats as { name: string; value?: number }[])
      .filter((x) => /(downstream_rq_total|downstream_cx_total)$/.test(x.name))
      .filter((x) => !x.name.includes(".worker_"))
      .map((x) => [x.name, x.value ?? 0]),
  );
  return runs;
}

try {
  const runs = await measureRounds();
  await cleanup();

  // Per mode: pooled percentiles (all rounds' samples) and the median of the rounds' percentiles.
  const summary = (rs: Run[]) => {
    const pooled = hopPercentiles(rs.flatMap((r) => r.buckets));
    const medianOfRounds: Record<string, number> = {};
    for (const k of Object.keys(pooled)) {
      medianOfRounds[k] = roundUs(
        median(rs.map((r) => (r as unknown as Record<string, number>)[k])),
      );
    }
    return {
      rounds: rs.length,
      sent: rs.reduce((n, r) => n + r.count, 0),
      failed: rs.reduce((n, r) => n + r.failed, 0),
      qps: rs.map((r) => r.actualQps),
      loads: rs.map((r) => r.load),
      envoyCpuUsPerRequest: rs.map((r) => r.envoyCpuUsPerRequest),
      envoyWaitPerWakeupUs: rs.map((r) => r.envoyWaitPerWakeupUs),
      pooled,
      medianOfRounds,
    };
  };
  const byMode = Object.fromEntries(
    (runs.length ? modes : []).map((m) => [m, summary(runs.filter((r) => r.mode === m))]),
  );
  const ratio = (x: number, y: number) => Math.round((x / y) * 100) / 100;
  const over = (m: Mode, base: Mode) => {
    const x = byMode[m], y = byMode[base];
    const d = (a: Record<string, number>, b: Record<string, number>) =>
      Object.fromEntries(Object.keys(a).map((k) => [k, roundUs(a[k] - b[k])]));
    return {
      over: base,
      pooled: d(x.pooled, y.pooled),
      medianOfRounds: d(x.medianOfRounds, y.medianOfRounds),
      ratioP50: ratio(x.pooled.p50, y.pooled.p50),
      ratioP99: ratio(x.pooled.p99, y.pooled.p99),
      envoyCpuUsPerRequest: median(x.envoyCpuUsPerRequest) - median(y.envoyCpuUsPerRequest),
    };
  };
  const added: Record<string, ReturnType<typeof over>> = {};
  for (const m of modes) {
    const base = BASELINE[m];
    if (base && byMode[base] && byMode[m]) added[m] = over(m, base);
  }
  if (byMode.captured && byMode.lane) added["captured-vs-lane"] = over("captured", "lane");

  const memory = memoryPods > 0
    ? { capture: await memoryRun(memoryPods, true), noCapture: await memoryRun(memoryPods, false) }
    : undefined;
  // A pod's CNI ADD with and without aether's plugin (bench/capture_add.ts).
  const podAdd = Number(values.adds) > 0
    ? await child("./capture_add.ts", ["--adds", values.adds!])
    : undefined;

  console.log(JSON.stringify({
    qps,
    connections: conns,
    seconds,
    warmup,
    rounds,
    cores: navigator.hardwareConcurrency,
    modes: byMode,
    added,
    runs: runs.map(({ buckets: _b, ...r }) => r),
    captureStats,
    memory,
    podAdd,
  }));
} finally {
  await cleanup();
}
