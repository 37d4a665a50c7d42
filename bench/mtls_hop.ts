/**
 * One mesh hop, SPIFFE mTLS vs plaintext, on real Envoy + SPIRE with CNI bridge pods: pod a calls
 * service b through the node proxy (plaintext: node proxy → b:9090; mTLS: node proxy → b:15008 →
 * inbound listener → b:9090). The load is fortio (a native, paced client: `fortio load -qps
 * <rate> -c 16 -t <seconds>s`) run inside pod a's network namespace; the modes alternate for
 * `--rounds` rounds each (ABBA order, a fresh node agent and Envoy per round, a warm-up before each
 * measured window). Per round it also reads the node proxy's own timing (Envoy's detailed
 * `downstream_rq_time` / `upstream_rq_time` histograms, before and after the window, whole
 * milliseconds) and how long Envoy's threads waited for a CPU per wake-up (schedstat). Then agent
 * memory for `--identities` identities' SVIDs (bench/svid_memory.ts in
 * its own process: RSS and heap before/after). Prints one JSON line.
 *
 * deno run -A bench/mtls_hop.ts [--rate 1000] [--seconds 20] [--rounds 3 (0: memory only)]
 *   [--identities 100] [--nice=0 (e.g. --nice=-10: Envoy, echo and fortio ahead of a loaded machine's
 *   other processes, the same in both modes)]
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { ensurePeer } from "../lib/peers/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/run.ts";
import { createPodNetwork, type NetPod } from "../e2e/netns.ts";
import { type Proc, waitFor } from "../e2e/peers/proc.ts";
import { startSpire } from "../e2e/spire.ts";
import { toYaml } from "../e2e/harness.ts";
import { echoInPod, netPodObject, podService } from "../e2e/identity_harness.ts";
import {
  type Bucket,
  bucketDiff,
  envoyHistograms,
  type FortioSummary,
  fortioSummary,
  hopPercentiles,
  median,
  roundUs,
  sampleCount,
} from "./latency_hist.ts";
import { readSchedstat, reniceThreads, schedWindow } from "./schedstat.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    identities: { type: "string", default: "100" },
    nice: { type: "string", default: "0" },
  },
});
const rate = Number(values.rate), seconds = Number(values.seconds);
const rounds = Number(values.rounds), conns = Number(values.connections);
/** `--nice=-10`: Envoy, the echo backend and fortio run at this nice value in both modes. */
const nice = Number(values.nice);
const quiet = new Logger("bench", () => {});
const host = "b.aether.internal:8080";
type Mode = "plaintext" | "mtls";

/** Runs fortio in `pod`'s netns against the egress listener; returns its summary. */
async function fortio(pod: NetPod, qps: number, secs: number): Promise<FortioSummary> {
  const [ip, bin] = await Promise.all([ensurePeer("ip"), ensurePeer("fortio")]);
  const file = await Deno.makeTempFile({ prefix: "aether-fortio-", suffix: ".json" });
  try {
    // nice → ip netns exec → fortio (the nice value is inherited).
    const args = [
      "-n",
      String(nice),
      ip,
      "netns",
      "exec",
      pod.netns,
      bin,
      "load",
      "-qps",
      String(qps),
      "-c",
      String(conns),
    ];
    args.push("-t", `${secs}s`, "-p", "50,90,99,99.9", "-H", `Host: ${host}`, "-json", file);
    args.push("http://127.0.0.1:18081/load");
    const out = await new Deno.Command("nice", { args, stdout: "piped", stderr: "piped" }).output();
    if (!out.success) throw new Error(`fortio failed: ${new TextDecoder().decode(out.stderr)}`);
    return fortioSummary(await Deno.readTextFile(file));
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/** The node proxy's request-time histograms (cumulative, by name). */
async function envoyTimes(node: NodeAgent): Promise<Map<string, Bucket[]>> {
  const path = "/stats?format=json&histogram_buckets=detailed&filter=rq_time$";
  return envoyHistograms(await node.envoy!.admin(path));
}

/** Envoy merges histograms for the admin at its stats flush (every 5 s): wait one out. */
const flush = () => new Promise((r) => setTimeout(r, 6_000));

const spire = await startSpire();
const net = await createPodNetwork();
const procs: Proc[] = [];
const dir = await Deno.makeTempDir({ prefix: "aether-bench-mtls-" });
try {
  await spire.registerPod("a", "client");
  await spire.registerPod("b", "b");
  const a = await net.addPod("aether-a"), b = await net.addPod("aether-b");
  procs.push(await echoInPod(b, "b", 9090));
  if (nice !== 0) await reniceThreads(procs[0].child.pid, nice);
  await Deno.writeTextFile(
    join(dir, "mesh.yaml"),
    toYaml(
      netPodObject(a, "a", "client-0", "client", "node-1"),
      netPodObject(b, "b", "b-0", "b", "node-1"),
      ...podService("b", "b", [b.ip], 9090),
    ),
  );
  const measure = async (mode: Mode, round: number) => {
    const mtls = mode === "mtls";
    const node = await runNode({
      ...nodeDefaults,
      config: dir,
      nodeName: "node-1",
      adminAddress: "127.0.0.1:0",
      xdsAddress: "127.0.0.1:0",
      dnsAddress: "none",
      logger: quiet,
      ...(mtls ? { spireAdminSocket: spire.adminSocket, trustDomain: spire.trustDomain } : {}),
    });
    try {
      await waitFor("node ready with its secrets", () =>
        Promise.resolve(
          node.ready() && (!mtls || (node.snapshots.resources("node-1")?.secrets.length ?? 0) >= 3)
            ? true
            : undefined,
        ), 90_000);
      if (nice !== 0) await reniceThreads(node.envoy!.pid!, nice);
      await waitFor("b answers", async () => {
        const r = await fortio(a, 50, 1);
        return r.failed === 0 && r.count > 0 ? true : undefined;
      }, 60_000);
      await fortio(a, rate, 3); // warm-up
      await flush();
      const t0 = await envoyTimes(node);
      const load0 = Deno.loadavg()[0];
      const s0 = await readSchedstat(node.envoy!.pid!);
      const f = await fortio(a, rate, seconds);
      const s1 = await readSchedstat(node.envoy!.pid!);
      const load1 = Deno.loadavg()[0];
      const envoySched = schedWindow(s0, s1);
      await flush();
      const t1 = await envoyTimes(node);
      const envoy: Record<string, Record<string, number>> = {};
      for (const [name, after] of t1) {
        const d = bucketDiff(after, t0.get(name));
        if (sampleCount(d) === 0 || name.includes(".external.")) continue;
        envoy[name] = { count: sampleCount(d), ...hopPercentiles(d) };
      }
      const { buckets, ...rest } = f;
      console.error(
        `[mtls] round ${round} ${mode}: ${f.actualQps} req/s, ${f.failed} failed, ` +
          `p50 ${hopPercentiles(buckets).p50} / p99 ${hopPercentiles(buckets).p99} ms, ` +
          `load ${load0.toFixed(1)}→${load1.toFixed(1)}, Envoy CPU ${envoySched.cpuMs} ms, ` +
          `run-queue wait ${envoySched.waitPerSliceUs} µs per wake-up`,
      );
      return {
        mode,
        round,
        load: [roundUs(load0), roundUs(load1)],
        ...rest,
        ...hopPercentiles(buckets),
        buckets,
        envoy,
        envoySched,
      };
    } finally {
      await node.close();
    }
  };
  type Run = Awaited<ReturnType<typeof measure>>;
  const runs: Run[] = [];
  for (let r = 0; r < rounds; r++) {
    const order: Mode[] = r % 2 === 0 ? ["plaintext", "mtls"] : ["mtls", "plaintext"];
    for (const m of order) runs.push(await measure(m, r));
  }

  // Per mode: pooled percentiles (all rounds' samples) and the median of the rounds' percentiles.
  const summary = (mode: Mode) => {
    const rs = runs.filter((r) => r.mode === mode);
    const pooled = hopPercentiles(rs.flatMap((r) => r.buckets));
    const perRound: Record<string, number> = {};
    for (const k of Object.keys(pooled)) {
      perRound[k] = roundUs(median(rs.map((r) => (r as unknown as Record<string, number>)[k])));
    }
    return {
      rounds: rs.length,
      sent: rs.reduce((n, r) => n + r.count, 0),
      failed: rs.reduce((n, r) => n + r.failed, 0),
      qps: rs.map((r) => r.actualQps),
      loads: rs.map((r) => r.load),
      envoyWaitPerWakeupUs: rs.map((r) => r.envoySched.waitPerSliceUs),
      envoyCpuUsPerRequest: rs.map((r) => Math.round((r.envoySched.cpuMs * 1000) / r.count)),
      pooled,
      medianOfRounds: perRound,
    };
  };
  const plain = summary("plaintext"), mtls = summary("mtls");
  const delta = (x: Record<string, number>, y: Record<string, number>) =>
    Object.fromEntries(Object.keys(x).map((k) => [k, roundUs(x[k] - y[k])]));
  // Envoy's view: the caller's egress listener (the whole hop as the node proxy sees it).
  const egress = (mode: Mode) => {
    const rs = runs.filter((r) => r.mode === mode);
    if (rs.length === 0) return undefined;
    const name = Object.keys(rs[0].envoy).find((n) => n.startsWith("http.aether_outbound_a_"));
    return name ? { name, ...medianOf(rs.map((r) => r.envoy[name] ?? {})) } : undefined;
  };
  const medianOf = (xs: Record<string, number>[]) =>
    Object.fromEntries(Object.keys(xs[0] ?? {}).map((k) => [k, median(xs.map((x) => x[k]))]));
  const envoyPlain = egress("plaintext"), envoyMtls = egress("mtls");

  // Agent memory for N identities' SVIDs, in a process of its own.
  const n = Number(values.identities);
  for (let i = 0; i < n; i++) await spire.registerPod("m", `sa-${i}`);
  const mem = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--expose-gc",
      new URL("./svid_memory.ts", import.meta.url).pathname,
      "--admin-socket",
      spire.adminSocket,
      "--trust-domain",
      spire.trustDomain,
      "--count",
      String(n),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!mem.success) throw new Error(`svid_memory failed: ${new TextDecoder().decode(mem.stderr)}`);
  const memory = JSON.parse(new TextDecoder().decode(mem.stdout).trim().split("\n").pop()!);

  console.log(JSON.stringify({
    rate,
    seconds,
    nice,
    connections: conns,
    plaintext: plain,
    mtls,
    addedPooled: delta(mtls.pooled, plain.pooled),
    addedMedianOfRounds: delta(mtls.medianOfRounds, plain.medianOfRounds),
    envoyEgress: { plaintext: envoyPlain, mtls: envoyMtls },
    runs: runs.map(({ buckets: _b, ...r }) => r),
    memory,
  }));
} finally {
  for (const p of procs.reverse()) await p.stop();
  await net.remove();
  await spire.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
