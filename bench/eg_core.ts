/**
 * aether's side of bench/eg_translate.ts, one cold run per process: reads and parses the file
 * (not timed, as the Envoy Gateway harness loads outside its timing too), then times admission
 * (CRD defaults + validation, which objects from an API server have already passed), resolve
 * (Gateway API → IR, after admission), translate (IR → Envoy resources) and encode (→ protobuf
 * snapshot). Prints one JSON line.
 *
 *   deno run -A bench/eg_core.ts <file>
 * @module
 */
import { readConfig } from "../lib/source/files.ts";
import { resolve } from "../lib/gatewayapi/mod.ts";
import { admit } from "../lib/gatewayapi/admit.ts";
import { translate } from "../agent/xds/translate/mod.ts";
import { Snapshot } from "../agent/xds/cache/mod.ts";
import { envoyRoot } from "../agent/xds/proto.ts";

const snap = await readConfig(Deno.args[0]);
envoyRoot(); // protos loaded once per process (start-up, not translation)
const t0 = performance.now();
// Admission is memoized per object: resolve below finds every object admitted already.
admit(snap.objects, []);
const t1 = performance.now();
const result = resolve(snap.objects);
const t2 = performance.now();
const resources = translate(result.ir);
const t3 = performance.now();
const snapshot = Snapshot.fromResources(resources);
const t4 = performance.now();
const status = Deno.readTextFileSync("/proc/self/status");
console.log(JSON.stringify({
  objects: snap.objects.length,
  problems: snap.problems.length + result.problems.length,
  admitMs: +(t1 - t0).toFixed(1),
  resolveMs: +(t2 - t1).toFixed(1),
  translateMs: +(t3 - t2).toFixed(1),
  encodeMs: +(t4 - t3).toFixed(1),
  coreMs: +(t4 - t1).toFixed(1),
  clusters: resources.clusters.length,
  version: snapshot.version,
  peakRssMiB: Math.round(Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024),
}));
