/**
 * Route edit → Envoy serving it: a standalone agent with a real Envoy holds `routes` HTTPRoutes
 * over `services` services; each edit changes one route's header value, and we time from handing
 * the change to the source until a real request through Envoy sees it.
 * `deno run -A bench/edit_latency.ts <routes> <services> <edits> [scoped-routes-at] [add|remove]` prints
 * one JSON line; `apply*` is the synchronous share (source → resolve → translate → encoded xDS
 * snapshot), the rest is the push and Envoy applying it. `scoped-routes-at` is the agent's
 * `--scoped-routes-at` (default: the agent's; 0 = one route table with VHDS at any size); with
 * `add` each change adds a route for a new host instead of editing one, with `remove` it deletes
 * one (served once its host answers 404). Envoy's allocated heap is read at the end.
 */
import http from "node:http";
import { Logger } from "../lib/log/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { runStandalone, standaloneDefaults } from "../agent/edge/mod.ts";
import { startEcho } from "../e2e/echo/server.ts";
import { freePort, request } from "../e2e/http_client.ts";
import { syntheticConfig, syntheticRoute } from "../testbed/fixtures/synthetic_config.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";

const routes = Number(Deno.args[0] ?? 1000);
const services = Number(Deno.args[1] ?? 1000);
const edits = Number(Deno.args[2] ?? 100);
const scopedRoutesAt = Deno.args[3] === undefined ? undefined : Number(Deno.args[3]);
const mode = Deno.args[4] === "add" || Deno.args[4] === "remove" ? Deno.args[4] : "edit";
const add = mode === "add";

const echo = await startEcho("bench", "127.0.0.1", 0);
const port = freePort();
const source = new MemorySource(
  syntheticConfig({ services, routes, port, endpointPort: echo.port }),
);
const startup = performance.now();
const agent = await runStandalone({
  ...standaloneDefaults,
  envoy: await ensurePeer("envoy"),
  source,
  adminAddress: "127.0.0.1:0",
  xdsAddress: "127.0.0.1:0",
  dnsAddress: "none",
  nodeId: "bench",
  logger: new Logger("agent", () => {}, "error"),
  ...(scopedRoutesAt === undefined ? {} : { scopedRoutesAt }),
});
await agent.waitReady(120000);
const readyMs = performance.now() - startup;

const pool = new http.Agent({ keepAlive: true, maxSockets: 1 });
const samples: number[] = [];
/** Per edit, the synchronous part: source → resolve → translate → xDS cache (before any push). */
const applied: number[] = [];
let envoyAllocatedMiB = 0;
let scopedLayout = false;
try {
  for (let n = 1; n <= edits; n++) {
    const k = add ? routes + n - 1 : (n * 7919) % routes;
    const started = performance.now();
    if (mode === "remove") source.remove(syntheticRoute(k, services));
    else source.apply(syntheticRoute(k, services, n));
    applied.push(performance.now() - started);
    for (;;) {
      const r = await request({ port, authority: `app-${k}.example.com`, path: "/", agent: pool });
      if (
        mode === "remove"
          ? r.status === 404
          : (r.json?.headers as Record<string, string> | undefined)?.["x-edit"] === String(n)
      ) break;
      if (performance.now() - started > 10000) throw new Error(`edit ${n} not served after 10 s`);
    }
    samples.push(performance.now() - started);
  }
  const scopes = /resources_encoded_total\{type_url="[^"]*ScopedRouteConfiguration"\} (\d+)/
    .exec(agent.metrics.render());
  scopedLayout = Number(scopes?.[1] ?? 0) > 0;
  const memory = JSON.parse(await agent.envoy!.admin("/memory"));
  envoyAllocatedMiB = Math.round(Number(memory.allocated) / 2 ** 20);
} finally {
  pool.destroy();
  await agent.close();
  await echo.close();
}
samples.sort((a, b) => a - b);
applied.sort((a, b) => a - b);
const pct = (p: number, list = samples) =>
  list[Math.min(list.length - 1, Math.floor((p / 100) * list.length))];
console.log(JSON.stringify({
  routes,
  services,
  edits,
  change: { add: "add host", remove: "remove route", edit: "edit route" }[mode],
  layout: scopedLayout ? "scoped" : "vhds",
  firstReadyMs: +readyMs.toFixed(0),
  p50Ms: +pct(50).toFixed(1),
  p90Ms: +pct(90).toFixed(1),
  p99Ms: +pct(99).toFixed(1),
  maxMs: +samples[samples.length - 1].toFixed(1),
  applyP50Ms: +pct(50, applied).toFixed(1),
  applyP99Ms: +pct(99, applied).toFixed(1),
  envoyAllocatedMiB,
  load: Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" "),
}));
