/**
 * What scoped routes cost a request: the standalone edge with `routes` HTTPRoutes (one exact host
 * each, over 100 Services whose endpoint is one echo-basic) served either as a route table per
 * host (`scoped`: the agent's `--scoped-routes-at` 2,000, with the filter that lower-cases the
 * Host) or as one table with VHDS (`vhds`: `--scoped-routes-at 0`). fortio sends the load
 * (`fortio load -qps <qps> -c <conns> -t <seconds>s`, every request to the last route's host), once
 * paced for latency and once unpaced (`-qps -1`) for throughput; Envoy's CPU per
 * request is its process's utime + stime over the window. The layouts alternate for `--rounds`
 * rounds, each round a fresh agent and Envoy. Prints one JSON line per layout and round.
 *
 *   deno run -A bench/scoped_hop.ts [--routes 2500] [--qps 2000] [--conns 16] [--seconds 10]
 *     [--rounds 2] [--upper]   (--upper: every request's Host in capitals)
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { runStandalone, standaloneDefaults } from "../agent/edge/mod.ts";
import { freePort } from "../e2e/http_client.ts";
import { syntheticConfig } from "../testbed/fixtures/synthetic_config.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { fortioSummary, percentile } from "./latency_hist.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    routes: { type: "string", default: "2500" },
    qps: { type: "string", default: "2000" },
    conns: { type: "string", default: "16" },
    seconds: { type: "string", default: "10" },
    rounds: { type: "string", default: "2" },
    upper: { type: "boolean", default: false },
  },
});
const routes = Number(values.routes);
const conns = Number(values.conns);
const seconds = Number(values.seconds);

/** utime + stime of a process in ms (clock ticks of 10 ms). */
function cpuMs(pid: number): number {
  const f = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
  return (Number(f[11]) + Number(f[12])) * 10;
}

/** One fortio run against the edge; its summary and Envoy's CPU per request. */
async function load(port: number, envoyPid: number, qps: number) {
  const file = await Deno.makeTempFile({ prefix: "aether-fortio-", suffix: ".json" });
  try {
    // Every request to the last route's host (the scope lookup and the table do not depend on
    // which host; Envoy's VHDS table matches an exact host by hash as well).
    const host = `app-${routes - 1}.example.com`;
    const args = ["load", "-qps", String(qps), "-c", String(conns), "-t", `${seconds}s`];
    args.push("-p", "50,90,99", "-json", file);
    args.push("-H", `Host: ${values.upper ? host.toUpperCase() : host}`);
    args.push(`http://127.0.0.1:${port}/`);
    const cpu0 = cpuMs(envoyPid);
    const out = await new Deno.Command(await ensurePeer("fortio"), {
      args,
      stdout: "null",
      stderr: "piped",
    }).output();
    const cpu = cpuMs(envoyPid) - cpu0;
    if (!out.success) throw new Error(`fortio failed: ${new TextDecoder().decode(out.stderr)}`);
    const s = fortioSummary(await Deno.readTextFile(file));
    return {
      actualQps: s.actualQps,
      failed: s.failed,
      p50Ms: +percentile(s.buckets, 50).toFixed(3),
      p99Ms: +percentile(s.buckets, 99).toFixed(3),
      envoyCpuUsPerRequest: +((cpu * 1000) / Math.max(1, s.count)).toFixed(1),
    };
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

const echoPort = freePort();
const echo = new Deno.Command(await ensurePeer("echo-basic"), {
  env: { HTTP_PORT: String(echoPort), H2C_PORT: String(freePort()), POD_NAME: "echo-0" },
  stdin: "null",
  stdout: "null",
  stderr: "null",
}).spawn();
try {
  for (let round = 1; round <= Number(values.rounds); round++) {
    const order = round % 2 ? ["scoped", "vhds"] : ["vhds", "scoped"];
    for (const layout of order) {
      const port = freePort();
      const agent = await runStandalone({
        ...standaloneDefaults,
        envoy: await ensurePeer("envoy"),
        source: new MemorySource(
          syntheticConfig({ services: 100, routes, port, endpointPort: echoPort }),
        ),
        adminAddress: "127.0.0.1:0",
        xdsAddress: "127.0.0.1:0",
        dnsAddress: "none",
        nodeId: "bench",
        envoyConcurrency: 1,
        scopedRoutesAt: layout === "scoped" ? 2000 : 0,
        logger: new Logger("agent", () => {}, "error"),
      });
      try {
        await agent.waitReady(120000);
        const pid = agent.envoy!.pid!;
        await load(port, pid, 200); // warm-up: connections, the cluster on the worker
        const paced = await load(port, pid, Number(values.qps));
        const unpaced = await load(port, pid, -1); // fortio: -1 is as fast as it can (0 is its default, 8)
        console.log(JSON.stringify({
          layout,
          round,
          routes,
          upperCaseHost: values.upper,
          paced,
          unpaced,
          load: Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" "),
        }));
      } finally {
        await agent.close();
      }
    }
  }
} finally {
  echo.kill("SIGTERM");
  await echo.status;
}
