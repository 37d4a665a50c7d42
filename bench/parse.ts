/**
 * The config file parse stage: one multi-document YAML file of a synthetic config (1 GatewayClass,
 * 1 Gateway, 5,000 Services + EndpointSlices and N HTTPRoutes, written as block YAML), parsed by
 * the file source (`parseYamlObjects`: js-yaml per document + limits) and, in the same run, by
 * the `yaml` package it replaced (`parseAllDocuments` + `toJS`); then a one-route edit re-parsed
 * with the previous parse at hand (only the changed document is parsed again).
 *
 * `deno run -A bench/parse.ts <routes> [services]` prints one JSON line (medians of 3 runs).
 */
import { parseAllDocuments, stringify } from "yaml";
import { parseYamlObjects } from "../lib/source/files/mod.ts";
import { syntheticConfig, syntheticRoute } from "../testbed/fixtures/synthetic_config.ts";

const routes = Number(Deno.args[0] ?? 1000);
const services = Number(Deno.args[1] ?? 5000);
const objects = syntheticConfig({ services, routes, port: 18080 });
const text = objects.map((o) => stringify(o)).join("---\n");
const edited = text.replace(
  stringify(syntheticRoute(routes - 1, services)),
  stringify(syntheticRoute(routes - 1, services, 1)),
);
if (edited === text) throw new Error("the edit did not change the text");

const median = (xs: number[]) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const time = (f: () => void) => {
  const t = performance.now();
  f();
  return performance.now() - t;
};

const oldMs: number[] = [], newMs: number[] = [], editMs: number[] = [];
let count = 0;
for (let run = 0; run < 3; run++) {
  oldMs.push(time(() => {
    const docs = parseAllDocuments(text, { prettyErrors: true });
    count = (Array.isArray(docs) ? docs : [docs]).map((d) => d.toJS({ maxAliasCount: 100 })).length;
  }));
  let first = parseYamlObjects("bench.yaml", "");
  newMs.push(time(() => {
    first = parseYamlObjects("bench.yaml", text);
  }));
  if (first.objects.length !== objects.length || first.problems.length) {
    throw new Error(`parsed ${first.objects.length} of ${objects.length} objects`);
  }
  editMs.push(time(() => parseYamlObjects("bench.yaml", edited, first)));
}
if (count !== objects.length) throw new Error(`yaml parsed ${count} documents`);
const oldMedian = median(oldMs), newMedian = median(newMs);
console.log(JSON.stringify({
  routes,
  objects: objects.length,
  fileMiB: Number((text.length / 2 ** 20).toFixed(2)),
  yamlPackageMs: Math.round(oldMedian),
  parseMs: Math.round(newMedian),
  speedup: Number((oldMedian / newMedian).toFixed(1)),
  editReparseMs: Number(median(editMs).toFixed(1)),
  peakRssMiB: Math.round(Deno.memoryUsage().rss / 2 ** 20),
}));
