/**
 * `deno task conformance [--run-test NAME[,NAME…]] [--skip-tests A,B] [--profiles P,Q] [--timeout MIN]
 * [--channel standard|experimental] [--keep] [--without-identity]`: the official Gateway API v1.5.1 conformance suite against the local cluster with
 * aether installed by its chart (testbed/conformance, docs/kubernetes.md). Prints a table; exits 1 if
 * a core test or an advertised extended test failed. Needs root (the local cluster).
 */
import { parseArgs } from "node:util";
import { reportTable, runConformance } from "../testbed/conformance/mod.ts";
import { Logger } from "../lib/log/mod.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "run-test": { type: "string" },
    "skip-tests": { type: "string" },
    profiles: { type: "string" },
    timeout: { type: "string" },
    channel: { type: "string" },
    keep: { type: "boolean" },
    "without-identity": { type: "boolean" },
  },
});
if (Deno.uid?.() !== 0) {
  console.error("the conformance suite runs on the local cluster, which needs root");
  Deno.exit(1);
}
if (values.channel && values.channel !== "standard" && values.channel !== "experimental") {
  console.error(`--channel: standard or experimental, not ${values.channel}`);
  Deno.exit(2);
}
const list = (s?: string) => s?.split(",").map((x) => x.trim()).filter(Boolean);
const r = await runConformance({
  runTest: values["run-test"],
  skipTests: list(values["skip-tests"]),
  profiles: list(values.profiles),
  timeoutMinutes: values.timeout ? Number(values.timeout) : undefined,
  channel: values.channel as "standard" | "experimental" | undefined,
  keep: values.keep,
  identity: !values["without-identity"],
  log: new Logger("conformance"),
});
console.log(
  `\nGateway API ${r.report.gatewayAPIVersion} conformance, ${r.report.date}, suite ${
    Math.round(r.run.ms / 1000)
  } s (exit ${r.run.code})\n`,
);
console.log(reportTable(r.report));
console.log(`\ntests that failed: ${r.failed.join(", ") || "none"}`);
if (r.explanation) console.log(`\n${r.explanation}`);
console.log(`\nreport: ${r.reportFile}\nlog: ${r.logFile}`);
Deno.exit(r.passed ? 0 : 1);
