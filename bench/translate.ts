/**
 * Translation benchmark, one size per process so peak memory is this size's alone:
 * `deno run -A bench/translate.ts <routes> <services>` prints one JSON line with the start-up time
 * (protos loaded, once per process; not in totalMs), the time of resolve (Gateway API → IR),
 * translate (IR → Envoy) and encode (→ protobuf snapshot), and the
 * process's peak RSS (of that cold run); then `editMs`: the agent's pipeline applying one-route
 * edits to the same config (median of 9), which reuses everything the edit did not change.
 */
import { resolve } from "../lib/gatewayapi/mod.ts";
import { translate } from "../agent/xds/translate/mod.ts";
import { Snapshot } from "../agent/xds/cache/mod.ts";
import { envoyRoot } from "../agent/xds/proto.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { syntheticConfig, syntheticRoute } from "../testbed/fixtures/synthetic_config.ts";
import { pipelineApply } from "./pipeline_apply.ts";

function peakRssMiB(): number {
  const status = Deno.readTextFileSync("/proc/self/status");
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0);
  return kb / 1024;
}

const routes = Number(Deno.args[0] ?? 1000);
const services = Number(Deno.args[1] ?? 5000);
const objects = syntheticConfig({ services, routes, port: 10080 });
// Start-up, outside the timed part: loading the protos (their codecs are generated on first use,
// inside encode: generating them all up front cost more start-up than it saved).
const s0 = performance.now();
envoyRoot();
const startupMs = performance.now() - s0;
const baselineRss = peakRssMiB();

const t0 = performance.now();
const resolved = resolve(objects);
const t1 = performance.now();
const resources = translate(resolved.ir);
const t2 = performance.now();
const snapshot = Snapshot.fromResources(resources);
const t3 = performance.now();
if (resolved.problems.length > 0) {
  throw new Error(`synthetic config has problems: ${JSON.stringify(resolved.problems[0])}`);
}
const peakRss = peakRssMiB();

/** Median time of the pipeline applying `edits` one-route edits, after applying `objects`. */
function editMedianMs(objects: SourceObject[], edits: number): number {
  const apply = pipelineApply();
  apply(0, objects);
  const first = objects.findIndex((o) => o.kind === "HTTPRoute");
  const times: number[] = [];
  let current = objects;
  for (let n = 1; n <= edits; n++) {
    const k = (n * 7919) % routes;
    current = current.with(first + k, syntheticRoute(k, services, n));
    const started = performance.now();
    apply(n, current);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b)[Math.floor(edits / 2)];
}
const editMs = editMedianMs(objects, 9);

console.log(JSON.stringify({
  routes,
  services,
  startupMs: +startupMs.toFixed(1),
  resolveMs: +(t1 - t0).toFixed(1),
  translateMs: +(t2 - t1).toFixed(1),
  encodeMs: +(t3 - t2).toFixed(1),
  totalMs: +(t3 - t0).toFixed(1),
  envoyRoutes: [...resources.routes, ...resources.virtualHosts ?? []].reduce(
    (n, r) => n + JSON.stringify(r.resource).split('"match"').length - 1,
    0,
  ),
  clusters: resources.clusters.length,
  snapshotVersion: snapshot.version.slice(0, 8),
  baselineRssMiB: +baselineRss.toFixed(0),
  peakRssMiB: +peakRss.toFixed(0),
  editMs: +editMs.toFixed(1),
}));
