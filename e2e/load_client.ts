/**
 * A paced load client run inside a pod: `--rate` requests per second (spread over `--workers`
 * keep-alive connections) to the node proxy's egress listener with a mesh Host, for
 * `--seconds` (or until `--stop-file` exists). `--address` (default 127.0.0.1) is where it connects:
 * an edge's address for traffic through a Gateway. Prints one JSON line: sent, ok (2xx), failed, statuses, errors (first few), failures (the first 20 with their time), lastFailedSentAt (when the last failed request was sent, ms since the epoch, 0 for none), rate,
 * and latency percentiles of the completed requests (p50Ms, p99Ms).
 *
 * deno run -A e2e/load_client.ts --host b.aether.internal:8080 --rate 250 --seconds 120
 * @module
 */
import http from "node:http";
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    host: { type: "string" },
    address: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "18081" },
    "stop-file": { type: "string" },
    rate: { type: "string", default: "250" },
    seconds: { type: "string", default: "10" },
    workers: { type: "string", default: "8" },
    path: { type: "string", default: "/load" },
  },
});
const rate = Number(values.rate), seconds = Number(values.seconds);
const workers = Number(values.workers);
const agent = new http.Agent({ keepAlive: true, maxSockets: workers });
const statuses: Record<string, number> = {};
const errors: string[] = [];
/** The first failures with their wall-clock time (ms since the epoch). */
const failures: { at: number; what: string }[] = [];
/** When the last failed request was sent (ms since the epoch; 0: none failed). */
let lastFailedSentAt = 0;
const failure = (what: string, sentAt: number) => {
  failed++;
  lastFailedSentAt = Math.max(lastFailedSentAt, sentAt);
  if (failures.length < 20) failures.push({ at: Date.now(), what });
};
const latencies: number[] = [];
let sent = 0, ok = 0, failed = 0;

function once(): Promise<void> {
  const t0 = performance.now(), sentAt = Date.now();
  return new Promise((resolve) => {
    const req = http.request({
      host: values.address,
      port: Number(values.port),
      path: values.path,
      headers: { host: values.host },
      agent,
      timeout: 10_000,
    }, (res) => {
      res.resume();
      res.on("end", () => {
        const s = String(res.statusCode);
        statuses[s] = (statuses[s] ?? 0) + 1;
        if ((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300) ok++;
        else failure(`HTTP ${res.statusCode}`, sentAt);
        latencies.push(performance.now() - t0);
        resolve();
      });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (e) => {
      failure(e.message, sentAt);
      if (errors.length < 5) errors.push(e.message);
      resolve();
    });
    req.end();
  });
}

const start = performance.now();
let end = start + seconds * 1000;
const stopFile = values["stop-file"];
const watchStop = stopFile
  ? setInterval(() => {
    Deno.stat(stopFile).then(() => end = 0, () => {});
  }, 100)
  : undefined;
const interval = (1000 * workers) / rate;
await Promise.all(Array.from({ length: workers }, async (_, w) => {
  let next = start + (interval * w) / workers;
  while (next < end) {
    sent++;
    await once();
    next += interval;
    const wait = next - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  }
}));
clearInterval(watchStop);
agent.destroy();
const elapsed = (performance.now() - start) / 1000;
latencies.sort((a, b) => a - b);
const pct = (q: number) =>
  latencies.length
    ? Math.round(latencies[Math.floor(q * (latencies.length - 1))] * 1000) / 1000
    : 0;
console.log(JSON.stringify({
  sent,
  ok,
  failed,
  statuses,
  errors,
  failures,
  lastFailedSentAt,
  rate: sent / elapsed,
  p50Ms: pct(0.5),
  p99Ms: pct(0.99),
}));
