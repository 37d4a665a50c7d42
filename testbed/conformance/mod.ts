/**
 * `deno task conformance`: the official Gateway API v1.5.1 conformance suite against the local
 * cluster with aether installed by its chart — profiles GATEWAY-HTTP and GATEWAY-GRPC, core plus
 * every extended feature the controller advertises in GatewayClass `supportedFeatures`. A full run
 * writes the upstream ConformanceReport to `docs/conformance/`; the gate ({@link gate}) decides the
 * exit code. See docs/kubernetes.md.
 * @module
 */
import { join } from "node:path";
import { type Cluster, withCluster } from "../cluster/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { projectRoot } from "../peers/mod.ts";
import { type Channel, useChannel } from "./channel.ts";
import { installAether, uninstallAether } from "./install.ts";
import { failedTests, failureMessage, runPassed } from "./failures.ts";
import { type ConformanceReport, type Gate, gate, parseReport, reportTable } from "./report.ts";
import { runSuite, type SuiteRun } from "./suite.ts";

export { uninstallAether };
export { failedTests, failureMessage, gate, parseReport, reportTable, runPassed };
export type { ConformanceReport, Gate };

/** Where a full run's report goes (committed). */
export const reportPath = join(projectRoot, "docs", "conformance", "v1.5.1-aether-report.yaml");

/** The profiles a run reports on (every test of an advertised feature runs whatever the list). */
export const defaultProfiles: readonly string[] = [
  "GATEWAY-HTTP",
  "GATEWAY-GRPC",
  "GATEWAY-TLS",
  "MESH-HTTP",
  "MESH-GRPC",
];

/**
 * Tests of the v1.5.1 suite no implementation can pass, each with why: skipped in every run (the
 * report lists them as skipped) and covered by aether's own tests instead.
 */
export const brokenUpstream: Readonly<Record<string, string>> = {
  MeshHTTPRoute307Redirect:
    "v1.5.1 applies the 303 test's manifest, which has no /temporary rule, so every mesh answers " +
    "404 (kubernetes-sigs/gateway-api#4806, fixed after v1.5.1); aether's 307 redirect on the " +
    "mesh: e2e/mesh_conformance_test.ts",
};

/** Options of {@link runConformance}. */
export interface ConformanceOptions {
  profiles?: string[];
  /** One test only (its report then goes to `.cache/conformance/`, not docs/). */
  runTest?: string;
  skipTests?: string[];
  /** Minutes for the whole suite (`-test.timeout`). */
  timeoutMinutes?: number;
  /**
   * The Gateway API CRD channel for the run (default experimental: TCPRoute and UDPRoute exist
   * only there); the standard channel is put back afterwards.
   */
  channel?: Channel;
  /** Leave aether, the channel and the suite's base resources as they are afterwards (iteration). */
  keep?: boolean;
  /** Install with identity (SPIRE, mTLS on every in-cluster hop): default true, as the chart's. */
  identity?: boolean;
  log?: Logger;
  progress?: (line: string) => void;
}

/** The outcome of {@link runConformance}. */
export interface ConformanceResult {
  report: ConformanceReport;
  gate: Gate;
  run: SuiteRun;
  reportFile: string;
  logFile: string;
  features: string[];
  /** The gate is open, no test failed and the suite exited 0. */
  passed: boolean;
  /** Top-level tests that failed (the report's and those outside every profile). */
  failed: string[];
  /** When not passed: the failed tests, the log's path and the suite's own failure lines. */
  explanation?: string;
}

/** Runs the suite under the cluster lock (the cluster comes up if needed). */
export function runConformance(opts: ConformanceOptions = {}): Promise<ConformanceResult> {
  const log = opts.log ?? new Logger("conformance");
  return withCluster((c) => inCluster(c, opts, log), {
    // busybox is not the suite's, but the cluster's defaults: a later user reusing the cluster this
    // run brought up finds what a fresh one has.
    // echo-advanced: Istio's echo server and client, the mesh profiles' app.
    images: [
      "aether",
      "echoBasic",
      "echoAdvanced",
      "busybox",
      "coredns",
      ...opts.identity !== false ? ["spireServer", "spireAgent"] as const : [],
    ],
    log,
  });
}

async function inCluster(
  c: Cluster,
  opts: ConformanceOptions,
  log: Logger,
): Promise<ConformanceResult> {
  const progress = opts.progress ?? ((line: string) => console.error(`[conformance] ${line}`));
  // Outside the cluster's state folder: a later user's `down` removes that, and the log with it.
  const scratch = join(projectRoot, ".cache", "conformance");
  await Deno.mkdir(scratch, { recursive: true });
  const reportFile = opts.runTest ? join(scratch, "report.yaml") : reportPath;
  const logFile = join(scratch, "suite.log");
  await Deno.remove(reportFile).catch(() => {});
  const channel = opts.channel ?? "experimental";
  progress(`Gateway API CRDs: the ${channel} channel; installing aether with the chart`);
  const features = await installAether(
    c.kubeconfig,
    c.layout,
    log,
    channel,
    opts.identity !== false,
  );
  progress(`GatewayClass and XMesh advertise ${features.length} features: ${features.join(", ")}`);
  for (const [test, why] of Object.entries(brokenUpstream)) progress(`skipping ${test}: ${why}`);
  progress(`running the suite (log: ${logFile})`);
  try {
    const run = await runSuite(
      {
        kubeconfig: c.kubeconfig,
        gatewayClass: "aether",
        profiles: opts.profiles ?? [...defaultProfiles],
        features,
        reportOutput: reportFile,
        runTest: opts.runTest,
        skipTests: [...(opts.skipTests ?? []), ...Object.keys(brokenUpstream)],
        timeoutMinutes: opts.timeoutMinutes ?? 120,
        keepBase: opts.keep,
        // One of MetalLB's pool; one of TEST-NET-1 (RFC 5737), which no pool here holds.
        usableAddress: c.layout.lbCidr.replace(/\d+\/\d+$/, "200"),
        unusableAddress: "192.0.2.1",
        implementation: {
          organization: "aether",
          project: "aether",
          version: "dev",
          // The suite refuses empty fields; there is no public address yet (.invalid is the
          // name reserved for that).
          url: "https://aether.invalid",
          contact: "aether maintainers",
        },
      },
      logFile,
      progress,
    );
    const suiteLog = await Deno.readTextFile(logFile);
    const text = await Deno.readTextFile(reportFile).catch(() => {
      const none: Gate = { ok: false, failures: [] };
      throw new Error(
        `the suite wrote no report\n${failureMessage({ gate: none, run, logFile, log: suiteLog })}`,
      );
    });
    const report = parseReport(text);
    const g = gate(report);
    const passed = runPassed(g, run);
    const explanation = passed
      ? undefined
      : failureMessage({ gate: g, run, logFile, log: suiteLog });
    const failed = failedTests(g, run);
    return { report, gate: g, run, reportFile, logFile, features, passed, failed, explanation };
  } finally {
    if (!opts.keep) {
      await uninstallAether(c.kubeconfig).catch((e) =>
        log.warn("uninstall failed", { error: String(e) })
      );
      // The chart's own channel again, for the next user of the cluster.
      await useChannel(c.kubeconfig, "standard", log.child("channel")).catch((e) =>
        log.warn("restoring the standard CRD channel failed", { error: String(e) })
      );
    }
  }
}
export { channelDir, crdNames, experimentalOnly, safeUpgrades, useChannel } from "./channel.ts";
