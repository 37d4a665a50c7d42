/**
 * The agent's own share of a route edit, in one process and without Envoy: a pipeline (resolve →
 * translate → encoded snapshot, as the standalone agent runs it) holds `routes` HTTPRoutes over
 * `services` Services; each of `edits` edits replaces one route (a new header value) and the
 * apply is timed (with `add` as a fourth argument each edit adds a route instead, with `remove` it
 * deletes one); the first apply of the whole config is timed too. CPU time per edit (user + system of the process, GC threads included) is the
 * figure that holds on a shared machine; wall percentiles follow the machine's load.
 *
 *   deno run -A --v8-flags=--max-semi-space-size=4 bench/edit_apply.ts [routes=1000] [services=1000] [edits=200] [add|remove]
 *
 * Prints one JSON line.
 * @module
 */
import process from "node:process";
import { syntheticConfig, syntheticRoute } from "../testbed/fixtures/synthetic_config.ts";
import { pipelineApply } from "./pipeline_apply.ts";

const routes = Number(Deno.args[0] ?? 1000);
const services = Number(Deno.args[1] ?? 1000);
const edits = Number(Deno.args[2] ?? 200);
const mode = Deno.args[3] === "add" || Deno.args[3] === "remove" ? Deno.args[3] : "edit";
const objects = syntheticConfig({ services, routes, port: 10080 });
const apply = pipelineApply();
const cpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const firstStarted = performance.now();
apply(0, objects);
const firstApplyMs = Math.round(performance.now() - firstStarted);
const first = objects.findIndex((o) => o.kind === "HTTPRoute");
const times: number[] = [];
let current = objects;
const cpu0 = cpuMs();
for (let n = 1; n <= edits; n++) {
  const k = (n * 7919) % routes;
  current = mode === "add"
    ? [...current, syntheticRoute(routes + n - 1, services)]
    : mode === "remove"
    ? current.toSpliced(first + (k % (routes - n + 1)), 1)
    : current.with(first + k, syntheticRoute(k, services, n));
  const started = performance.now();
  apply(n, current);
  times.push(performance.now() - started);
}
const cpuPerEdit = (cpuMs() - cpu0) / edits;
times.sort((a, b) => a - b);
const pct = (p: number) => +times[Math.min(edits - 1, Math.floor((p / 100) * edits))].toFixed(1);
console.log(JSON.stringify({
  routes,
  services,
  edits,
  mode,
  firstApplyMs,
  p50Ms: pct(50),
  p90Ms: pct(90),
  p99Ms: pct(99),
  cpuMsPerEdit: +cpuPerEdit.toFixed(1),
  load: Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" "),
}));
