/**
 * One mesh hop, SPIFFE mTLS vs plaintext, on real Envoy + SPIRE with CNI bridge pods: pod a calls
 * service b through its node proxy's egress listener. Modes (`--modes`, default all four):
 * - `plaintext`: node agent without SPIRE, node proxy → b:9090;
 * - `mtls`: both pods on node-1, the same-node hop: node proxy → (internal listener, mTLS) → b's
 *   inbound chain → b:9090, all in one Envoy;
 * - `mtls-remote`: b on node-2, a second node agent with its own Envoy: node-1's proxy → b:15008
 *   over mTLS (TCP) → node-2's inbound listener → b:9090 (a cross-node hop, on one machine);
 * - `reference`: a plain Envoy → Envoy mTLS pair without aether's configuration
 *   (bench/mtls_reference.ts), the same path as `mtls-remote`.
 * The load is fortio (a native, paced client: `fortio load -qps <rate> -c 16 -t <seconds>s`) run
 * inside pod a's network namespace; the modes alternate for `--rounds` rounds each (ABBA order
 * over all modes, fresh agents and Envoys per round, a warm-up before each measured window). Per round it also reads the node proxy's own timing (Envoy's detailed
 * `downstream_rq_time` / `upstream_rq_time` histograms, before and after the window, whole
 * milliseconds) and how long Envoy's threads waited for a CPU per wake-up (schedstat). Then agent
 * memory for `--identities` identities' SVIDs (bench/svid_memory.ts in
 * its own process: RSS and heap before/after). Prints one JSON line.
 *
 * deno run -A bench/mtls_hop.ts [--rate 1000] [--seconds 20] [--rounds 3 (0: memory only)]
 *   [--modes plaintext,mtls,mtls-remote,reference] [--identities 100 (0: no memory run)] [--nice=0 (e.g. --nice=-10: Envoy, echo and fortio ahead of a loaded machine's
 *   other processes, the same in both modes)]
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { createPodNetwork, type NetPod } from "../e2e/netns.ts";
import { type Proc, waitFor } from "../e2e/peers/proc.ts";
import { type Spire, startSpire } from "../e2e/spire.ts";
import { toYaml } from "../e2e/harness.ts";
import { echoInPod, netPodObject, podService, secretPem } from "../e2e/identity_harness.ts";
import { bundleSecretName } from "../agent/xds/translate/mod.ts";
import { type Pem, startReferencePair } from "./mtls_reference.ts";
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
import { readSchedstat, reniceThreads, type SchedStat, schedWindow } from "./schedstat.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "20" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "16" },
    identities: { type: "string", default: "100" },
    nice: { type: "string", default: "0" },
    modes: { type: "string", default: "plaintext,mtls,mtls-remote,reference" },
  },
});
const rate = Number(values.rate), seconds = Number(values.seconds);
const rounds = Number(values.rounds), conns = Number(values.connections);
/** `--nice=-10`: Envoy, the echo backend and fortio run at this nice value in both modes. */
const nice = Number(values.nice);
const quiet = new Logger("bench", () => {});
const host = "b.aether.internal:8080";
const MODES = ["plaintext", "mtls", "mtls-remote", "reference"] as const;
type Mode = typeof MODES[number];
const modes = values.modes!.split(",") as Mode[];
for (const m of modes) {
  if (!MODES.includes(m)) throw new Error(`--modes: unknown mode ${m} (${MODES.join(", ")})`);
}
if (!modes.includes("plaintext")) throw new Error("--modes must include plaintext (the baseline)");
if (
  modes.includes("reference") &&
  !(modes.indexOf("mtls") >= 0 && modes.indexOf("mtls") < modes.indexOf("reference"))
) {
  throw new Error("--modes: reference needs mtls before it (its SVIDs come from an mtls round)");
}

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

/** The schedstat of several processes, summed. */
async function schedOf(pids: number[]): Promise<SchedStat> {
  const all = await Promise.all(pids.map(readSchedstat));
  return all.reduce((a, b) => ({
    runNs: a.runNs + b.runNs,
    waitNs: a.waitNs + b.waitNs,
    slices: a.slices + b.slices,
  }));
}

/** One mode's proxies, running: the Envoy pids, the caller's aether node (for its timers). */
interface Setup {
  pids: number[];
  node?: NodeAgent;
  close(): Promise<void>;
}

/** Agent memory for `n` identities' SVIDs (bench/svid_memory.ts in its own process). */
async function svidMemory(spire: Spire, n: number): Promise<unknown> {
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
  return JSON.parse(new TextDecoder().decode(mem.stdout).trim().split("\n").pop()!);
}

const spire = await startSpire();
const net = await createPodNetwork();
const procs: Proc[] = [];
const dir = await Deno.makeTempDir({ prefix: "aether-bench-mtls-" });
try {
  const clientId = await spire.registerPod("a", "client");
  const bId = await spire.registerPod("b", "b");
  const a = await net.addPod("aether-a"), b = await net.addPod("aether-b");
  procs.push(await echoInPod(b, "b", 9090));
  if (nice !== 0) await reniceThreads(procs[0].child.pid, nice);
  // Same node: both pods on node-1; remote: b on node-2 (its own agent and Envoy).
  const write = (sub: string, bNode: string) =>
    Deno.mkdir(join(dir, sub)).then(() =>
      Deno.writeTextFile(
        join(dir, sub, "mesh.yaml"),
        toYaml(
          netPodObject(a, "a", "client-0", "client", "node-1"),
          netPodObject(b, "b", "b-0", "b", bNode),
          ...podService("b", "b", [b.ip], 9090),
        ),
      )
    );
  await write("same", "node-1");
  await write("remote", "node-2");
  /** The SVIDs and bundle the reference pair uses (taken from an mTLS round's node). */
  let pems: { client: Pem; server: Pem; ca: string } | undefined;

  const node = async (mtls: boolean, sub: string, nodeName: string, secrets: number) => {
    const n = await runNode({
      ...nodeDefaults,
      config: join(dir, sub),
      nodeName,
      adminAddress: "127.0.0.1:0",
      xdsAddress: "127.0.0.1:0",
      dnsAddress: "none",
      logger: quiet,
      ...(mtls ? { spireAdminSocket: spire.adminSocket, trustDomain: spire.trustDomain } : {}),
    });
    try {
      await waitFor(`${nodeName} ready with its secrets`, () =>
        Promise.resolve(
          n.ready() && (n.snapshots.resources(nodeName)?.secrets.length ?? 0) >= secrets
            ? true
            : undefined,
        ), 90_000);
      return n;
    } catch (e) {
      await n.close();
      throw e;
    }
  };
  const setup = async (mode: Mode): Promise<Setup> => {
    if (mode === "reference") {
      if (!pems) throw new Error("the reference mode needs an mtls round before it");
      const pair = await startReferencePair({
        callerNetns: a.netnsPath,
        calleeIp: b.ip,
        calleeNetns: b.netnsPath,
        targetPort: 9090,
        ...pems,
        serverId: bId,
        trustDomain: spire.trustDomain,
      });
      return { pids: pair.pids, close: pair.stop };
    }
    if (mode === "mtls-remote") {
      const n1 = await node(true, "remote", "node-1", 2);
      const n2 = await node(true, "remote", "node-2", 2).catch(async (e) => {
        await n1.close();
        throw e;
      });
      return {
        pids: [n1.envoy!.pid!, n2.envoy!.pid!],
        node: n1,
        close: async () => {
          await n1.close();
          await n2.close();
        },
      };
    }
    const mtls = mode === "mtls";
    const n = await node(mtls, "same", "node-1", mtls ? 3 : 0);
    if (mtls) {
      const pem = (id: string) => secretPem(n, "node-1", id);
      const c = pem(clientId), s = pem(bId), ca = pem(bundleSecretName(spire.trustDomain))?.ca;
      if (c?.cert && c.key && s?.cert && s.key && ca) {
        pems = { client: { cert: c.cert, key: c.key }, server: { cert: s.cert, key: s.key }, ca };
      }
    }
    return { pids: [n.envoy!.pid!], node: n, close: () => n.close() };
  };
  const measure = async (mode: Mode, round: number) => {
    const st = await setup(mode);
    try {
      if (nice !== 0) { for (const pid of st.pids) await reniceThreads(pid, nice); }
      await waitFor("b answers", async () => {
        const r = await fortio(a, 50, 1);
        return r.failed === 0 && r.count > 0 ? true : undefined;
      }, 60_000);
      await fortio(a, rate, 3); // warm-up
      if (st.node) await flush();
      const t0 = st.node ? await envoyTimes(st.node) : new Map<string, Bucket[]>();
      const load0 = Deno.loadavg()[0];
      const s0 = await schedOf(st.pids);
      const f = await fortio(a, rate, seconds);
      const s1 = await schedOf(st.pids);
      const load1 = Deno.loadavg()[0];
      const envoySched = schedWindow(s0, s1);
      if (st.node) await flush();
      const t1 = st.node ? await envoyTimes(st.node) : new Map<string, Bucket[]>();
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
          `load ${load0.toFixed(1)}→${load1.toFixed(1)}, Envoy CPU ${envoySched.cpuMs} ms ` +
          `(${Math.round((envoySched.cpuMs * 1000) / f.count)} µs/request), ` +
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
      await st.close();
    }
  };
  type Run = Awaited<ReturnType<typeof measure>>;
  const runs: Run[] = [];
  for (let r = 0; r < rounds; r++) {
    // ABBA over every mode: forward in even rounds, backward in odd ones.
    const order = r % 2 === 0 ? modes : [...modes].reverse();
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
  const byMode = Object.fromEntries(modes.map((m) => [m, summary(m)]));
  const plain = summary("plaintext");
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
  // Added over the plaintext hop, per mode (pooled, and the median of the rounds' percentiles).
  const added = Object.fromEntries(
    modes.filter((m) => m !== "plaintext").map((m) => [m, {
      pooled: delta(byMode[m].pooled, plain.pooled),
      medianOfRounds: delta(byMode[m].medianOfRounds, plain.medianOfRounds),
      envoyCpuUsPerRequest: median(byMode[m].envoyCpuUsPerRequest) -
        median(plain.envoyCpuUsPerRequest),
    }]),
  );

  // Agent memory for N identities' SVIDs, in a process of its own (`--identities 0`: skipped).
  const n = Number(values.identities);
  const memory = n > 0 ? await svidMemory(spire, n) : undefined;

  console.log(JSON.stringify({
    rate,
    seconds,
    nice,
    connections: conns,
    modes: byMode,
    added,
    envoyEgress: Object.fromEntries(modes.map((m) => [m, egress(m)])),
    runs: runs.map(({ buckets: _b, ...r }) => r),
    memory,
  }));
} finally {
  for (const p of procs.reverse()) await p.stop();
  await net.remove();
  await spire.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
