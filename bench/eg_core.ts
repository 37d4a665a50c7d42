/**
 * aether's side of bench/eg_translate.ts, the way the Envoy Gateway harness measures its own:
 * `rounds` times in one process, each round on freshly parsed objects (as each watch event brings
 * new objects, so no per-object memo carries over), times admission (CRD defaults + validation,
 * which objects from an API server have already passed), resolve (Gateway API → IR, after
 * admission; edge only — no MeshIR, as Envoy Gateway's translator builds none), translate (IR → Envoy resources) and encode (→ protobuf snapshot). Reading and
 * parsing the file are not timed (the harness loads outside its timing too). Prints one JSON line
 * per round, then the medians (and the first, cold round's core time).
 *
 * What each figure holds: `coreMs` = resolve + translate + encode. Each round has a fresh
 * ResolveState (a cold resolve: no conversion, attachment or status memo); admission fills its
 * admission memo first (`admitMs`), so resolve finds every object admitted and `resolveMs` is
 * resolve after admission, as the API server's objects arrive (before 2026-12-06 the admission
 * had its own memo and resolve admitted every object a second time inside `resolveMs`).
 * `coreNoEncodeMs` = resolve + translate: Envoy Gateway's timed part ends at go-control-plane
 * structs, not wire bytes (its harness does not serialize), so this is the like-for-like part
 * of aether's; `encodeMs` is the protobuf bytes, SHA-256 per resource and type versions.
 * `coreCpuMs` is the process's CPU time (user + system, every thread) over the same span as
 * `coreMs`: on a loaded machine, wall time stretches and it does not.
 *
 * translate takes the agent's defaults: at ≥ 2,000 exact hostnames the listener is served scoped (a
 * RouteConfiguration and a ScopedRouteConfiguration per host, more to encode than one table);
 * `scoped-routes-at` 0 is the one table with VHDS at any size (the layout before 2026-12-07).
 *
 *   deno run -A bench/eg_core.ts <file> [rounds=3] [scoped-routes-at]
 * @module
 */
import { readConfig } from "../lib/source/files/mod.ts";
import { CelRules, resolve, ResolveState } from "../lib/gatewayapi/mod.ts";
import { admit } from "../lib/gatewayapi/admission/mod.ts";
import { ADMISSION_KINDS } from "../lib/gatewayapi/mod.ts";
import { translate } from "../agent/xds/translate/mod.ts";
import { Snapshot } from "../agent/xds/cache/mod.ts";
import { envoyRoot } from "../agent/xds/proto.ts";
import { cpuUsage } from "node:process";

const rounds = Number(Deno.args[1] ?? 3);
const scopedRoutesAt = Deno.args[2] === undefined ? undefined : Number(Deno.args[2]);
envoyRoot(); // protos loaded once per process (start-up, not translation)
const cel = await new CelRules().load(); // likewise the CEL library
const runs: Record<string, number>[] = [];
for (let r = 0; r < rounds; r++) {
  const snap = await readConfig(Deno.args[0]);
  const t0 = performance.now();
  // Into the round's fresh state: resolve below finds every object admitted (see above).
  const state = new ResolveState(cel);
  admit(snap.objects, [], ADMISSION_KINDS, false, state.admitted, cel);
  const cpu1 = cpuUsage();
  const t1 = performance.now();
  // Edge only, like EG's translator (which builds no mesh): the MeshIR is not built.
  const result = resolve(snap.objects, { mesh: false }, state);
  const t2 = performance.now();
  const resources = translate(result.ir, { scopedRoutesAt });
  const t3 = performance.now();
  Snapshot.fromResources(resources);
  const t4 = performance.now();
  const cpu = cpuUsage(cpu1);
  const run = {
    round: r,
    objects: snap.objects.length,
    problems: snap.problems.length + result.problems.length,
    admitMs: +(t1 - t0).toFixed(1),
    resolveMs: +(t2 - t1).toFixed(1),
    translateMs: +(t3 - t2).toFixed(1),
    encodeMs: +(t4 - t3).toFixed(1),
    coreMs: +(t4 - t1).toFixed(1),
    coreNoEncodeMs: +(t3 - t1).toFixed(1),
    coreCpuMs: +((cpu.user + cpu.system) / 1000).toFixed(1),
    clusters: resources.clusters.length,
    scopes: resources.scopedRoutes?.length ?? 0,
  };
  console.log(JSON.stringify(run));
  runs.push(run);
}
const median = (k: string) => [...runs.map((r) => r[k])].sort((a, b) => a - b)[runs.length >> 1];
const status = Deno.readTextFileSync("/proc/self/status");
console.log(JSON.stringify({
  ...Object.fromEntries(
    ["admitMs", "resolveMs", "translateMs", "encodeMs", "coreMs", "coreNoEncodeMs", "coreCpuMs"]
      .map((k) => [k, median(k)]),
  ),
  coldCoreMs: runs[0].coreMs,
  scopes: runs[0].scopes,
  problems: runs[0].problems,
  peakRssMiB: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024),
}));
