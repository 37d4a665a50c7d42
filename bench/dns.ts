/**
 * DNS responder benchmark: dnsperf against aether's responder and against unbound, side by side in
 * one run, each server pinned to one core (taskset -c 0), dnsperf on another core (taskset -c 1).
 *
 * - mesh names: 100 names `web<i>.mesh.internal` — aether answers from its records, unbound from
 *   `local-data` in a static local zone.
 * - forwarded names: 100 names `fwd<i>.ext.test` — both forward to the same upstream unbound
 *   (serving them as local-data) and both cache.
 *
 * QPS from dnsperf's summary, p50/p99 from the per-query latencies `dnsperf -v` prints. The
 * servers are measured alternately, `--rounds` times each, and each figure is the median round
 * (the machine may be shared: alternating spreads its load over both). Then each server is run
 * at half its own measured mesh-name QPS (`dnsperf -Q`) for the latency at 50% load.
 *
 *   deno run -A bench/dns.ts [--seconds 10] [--outstanding 100] [--clients 1] [--rounds 3]
 *
 * Prints a Markdown table and a JSON line.
 * @module
 */
import { parseArgs } from "node:util";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { freePort, type Peer, startUnbound, udpQuery } from "../agent/dns/_test_utils.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seconds: { type: "string", default: "10" },
    outstanding: { type: "string", default: "100" },
    clients: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
  },
});
const NAMES = 100;
const dnsperf = await ensurePeer("dnsperf");
await ensurePeer("unbound");
const dir = await Deno.makeTempDir({ prefix: "aether-dnsbench-" });

const meshData = Array.from(
  { length: NAMES },
  (_, i) => `local-data: "web${i}.mesh.internal. 5 IN A 10.96.${i >> 8}.${i & 255}"`,
);
const fwdData = Array.from(
  { length: NAMES },
  (_, i) => `local-data: "fwd${i}.ext.test. 300 IN A 192.0.2.${i}"`,
);
await Deno.writeTextFile(
  join(dir, "mesh.txt"),
  Array.from({ length: NAMES }, (_, i) => `web${i}.mesh.internal A\n`).join(""),
);
await Deno.writeTextFile(
  join(dir, "fwd.txt"),
  Array.from({ length: NAMES }, (_, i) => `fwd${i}.ext.test A\n`).join(""),
);

const peers: Peer[] = [];
let aether: Deno.ChildProcess | undefined;
try {
  // The shared upstream for forwarded names (core 1, beside dnsperf: it only sees cache misses).
  const upstream = await startUnbound({
    cpu: 1,
    server: ['local-zone: "ext.test." static', ...fwdData],
  });
  peers.push(upstream);
  const unbound = await startUnbound({
    cpu: 0,
    server: ['local-zone: "mesh.internal." static', ...meshData],
    extra: [
      "forward-zone:",
      '  name: "ext.test."',
      `  forward-addr: 127.0.0.1@${upstream.port}`,
    ],
  });
  peers.push(unbound);

  const aetherPort = await freePort();
  const cli = fileURLToPath(new URL("../tools/dns_responder.ts", import.meta.url));
  aether = new Deno.Command("taskset", {
    args: [
      "-c",
      "0",
      Deno.execPath(),
      "run",
      "-A",
      cli,
      "--dns-address",
      `127.0.0.1:${aetherPort}`,
      "--mesh-domain",
      "mesh.internal",
      "--upstream",
      `127.0.0.1:${upstream.port}`,
      "--rate-limit-qps",
      "1000000000", // the limiter runs (its cost is measured) but never limits dnsperf
      ...Array.from(
        { length: NAMES },
        (_, i) => ["--record", `web${i}=10.96.${i >> 8}.${i & 255}`],
      ).flat(),
    ],
    stdout: "null",
    stderr: "null",
    env: { AETHER_LOG_LEVEL: "warn" },
  }).spawn();
  const probe = new Uint8Array([1, 2, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 1]);
  for (let i = 0; i < 200 && !(await udpQuery("127.0.0.1", aetherPort, probe, 100)); i++) {
    await new Promise((r) => setTimeout(r, 50));
  }

  interface Run {
    qps: number;
    p50: number;
    p99: number;
    lost: number;
  }
  const perf = async (port: number, file: string, rate?: number): Promise<Run> => {
    const args = [
      "-c",
      "1",
      dnsperf,
      "-s",
      "127.0.0.1",
      "-p",
      String(port),
      "-d",
      join(dir, file),
      "-l",
      values.seconds!,
      "-q",
      values.outstanding!,
      "-c",
      values.clients!,
      "-v",
      ...(rate ? ["-Q", String(Math.round(rate))] : []),
    ];
    const out = await new Deno.Command("taskset", { args, stdout: "piped", stderr: "piped" })
      .output();
    const text = new TextDecoder().decode(out.stdout);
    const lat: number[] = [];
    for (const line of text.split("\n")) {
      if (!line.startsWith("> ")) continue;
      const v = Number(line.slice(line.lastIndexOf(" ") + 1));
      if (Number.isFinite(v)) lat.push(v);
    }
    lat.sort((a, b) => a - b);
    const pct = (p: number) =>
      lat.length ? lat[Math.min(lat.length - 1, Math.floor(lat.length * p))] : NaN;
    const qps = Number(/Queries per second:\s+([\d.]+)/.exec(text)?.[1] ?? NaN);
    const lost = Number(/Queries lost:\s+(\d+)/.exec(text)?.[1] ?? NaN);
    return { qps, p50: pct(0.5) * 1000, p99: pct(0.99) * 1000, lost };
  };

  // Warm both caches for the forwarded names, then measure alternately.
  for (const port of [aetherPort, unbound.port]) {
    await new Deno.Command(dnsperf, {
      args: ["-s", "127.0.0.1", "-p", String(port), "-d", join(dir, "fwd.txt"), "-n", "1"],
      stdout: "null",
      stderr: "null",
    }).output();
  }
  const results: Record<string, Record<string, Run>> = { mesh: {}, forwarded: {}, half: {} };
  const median = (runs: Run[]) => runs.sort((a, b) => a.qps - b.qps)[runs.length >> 1];
  const ports = { aether: aetherPort, unbound: unbound.port };
  for (const [kind, file] of [["mesh", "mesh.txt"], ["forwarded", "fwd.txt"]] as const) {
    const runs: Record<string, Run[]> = { aether: [], unbound: [] };
    for (let r = 0; r < Number(values.rounds); r++) {
      for (const server of ["aether", "unbound"] as const) {
        runs[server].push(await perf(ports[server], file));
      }
    }
    for (const server of ["aether", "unbound"] as const) {
      results[kind][server] = median(runs[server]);
    }
  }
  for (const server of ["aether", "unbound"] as const) {
    results.half[server] = await perf(ports[server], "mesh.txt", results.mesh[server].qps / 2);
  }
  const load = (await Deno.readTextFile("/proc/loadavg")).split(" ").slice(0, 3).join(" ");
  console.log(`load average at the end: ${load}`);
  const cpu = (await new Deno.Command("nproc").output()).stdout;
  const mem = (await new Deno.Command("free", { args: ["-g"] }).output()).stdout;
  const dec = new TextDecoder();
  const f = (n: number, d = 0) => Number.isFinite(n) ? n.toFixed(d) : "n/a";
  console.log(`nproc: ${dec.decode(cpu).trim()}`);
  console.log(dec.decode(mem).trim());
  console.log(
    `\n| names | server | QPS | p50 ms | p99 ms | lost | QPS vs unbound |\n|---|---|---|---|---|---|---|`,
  );
  for (const kind of ["mesh", "forwarded", "half"]) {
    for (const server of ["aether", "unbound"]) {
      const r = results[kind][server];
      const ratio = r.qps / results[kind].unbound.qps;
      console.log(
        `| ${kind === "half" ? "mesh at 50% of own max" : kind} | ${server} | ${f(r.qps)} | ${
          f(r.p50, 3)
        } | ${f(r.p99, 3)} | ${r.lost} | ${f(ratio, 2)} |`,
      );
    }
  }
  console.log(JSON.stringify({ bench: "dns", seconds: Number(values.seconds), results }));
} finally {
  if (aether) {
    try {
      aether.kill("SIGTERM");
    } catch { /* exited */ }
    await aether.status;
  }
  for (const p of peers) await p.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
