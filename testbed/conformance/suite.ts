/**
 * Running the official Gateway API conformance suite binary (peer `gateway-conformance`, the
 * v1.5.1 `go test -c` build) against a cluster: its arguments, and a run that writes the full log
 * to a file while printing one progress line per test.
 * @module
 */
import { ensurePeer } from "../peers/mod.ts";

/** What one suite run is asked to do. */
export interface SuiteOptions {
  kubeconfig: string;
  gatewayClass: string;
  /** Conformance profiles, e.g. GATEWAY-HTTP, GATEWAY-GRPC. */
  profiles: string[];
  /** Features to test: aether's GatewayClass `supportedFeatures` (core and extended). */
  features: string[];
  /** Where the suite writes its ConformanceReport YAML. */
  reportOutput: string;
  /**
   * One test (`-run-test`) or several, comma-separated (go test's subtest filter), for iteration;
   * the report then covers only them.
   */
  runTest?: string;
  skipTests?: string[];
  /** The whole run's limit (`-test.timeout`); the suite's own waits are its defaults. */
  timeoutMinutes: number;
  /** For GatewayStaticAddresses: an address the LoadBalancer can give, and one it cannot. */
  usableAddress?: string;
  unusableAddress?: string;
  /** Keep the suite's base namespaces and Gateways for the next run (faster iteration). */
  keepBase?: boolean;
  /** The suite requires every field (no public address exists yet: see testbed/conformance/mod.ts). */
  implementation: {
    organization: string;
    project: string;
    url: string;
    version: string;
    contact: string;
  };
}

/** The suite binary's arguments (pure). */
export function suiteArgs(o: SuiteOptions): string[] {
  // Several tests (`A,B`): go test's own subtest filter, as the suite's -run-test takes only one.
  const several = o.runTest?.includes(",")
    ? o.runTest.split(",").map((x) => x.trim()).filter(Boolean)
    : undefined;
  const args = [
    several ? `-test.run=TestConformance/^(${several.join("|")})$` : "-test.run=TestConformance",
    "-test.v",
    `-test.timeout=${o.timeoutMinutes}m`,
    `-kubeconfig=${o.kubeconfig}`,
    `-gateway-class=${o.gatewayClass}`,
    `-conformance-profiles=${o.profiles.join(",")}`,
    `-supported-features=${o.features.join(",")}`,
    `-report-output=${o.reportOutput}`,
    `-organization=${o.implementation.organization}`,
    `-project=${o.implementation.project}`,
    `-version=${o.implementation.version}`,
    `-url=${o.implementation.url}`,
    `-contact=${o.implementation.contact}`,
    `-cleanup-base-resources=${o.keepBase ? "false" : "true"}`,
  ];
  if (o.usableAddress) args.push(`-usable-address=${o.usableAddress}`);
  if (o.unusableAddress) args.push(`-unusable-address=${o.unusableAddress}`);
  if (o.runTest && !several) args.push(`-run-test=${o.runTest}`);
  if (o.skipTests?.length) args.push(`-skip-tests=${o.skipTests.join(",")}`);
  return args;
}

/** A test's end as `go test -v` prints it (`--- PASS: TestConformance/HTTPRouteMatching (4.1s)`). */
export interface TestEnd {
  verdict: "PASS" | "FAIL" | "SKIP";
  /** The path below TestConformance, e.g. `HTTPRouteMatching` or `HTTPRouteMatching/case_1`. */
  name: string;
  seconds: number;
}

/** Parses one line of `go test -v` output as a test's end (pure). */
export function parseTestEnd(line: string): TestEnd | undefined {
  const m = line.match(/^\s*--- (PASS|FAIL|SKIP): TestConformance\/(\S+) \(([\d.]+)s\)/);
  if (!m) return undefined;
  return { verdict: m[1] as TestEnd["verdict"], name: m[2], seconds: Number(m[3]) };
}

/** The outcome of a run. */
export interface SuiteRun {
  code: number;
  ms: number;
  /** Top-level tests (no subtests) with their verdicts (printed at the end of the run). */
  tests: TestEnd[];
}

/**
 * Runs the suite, writing its whole output to `logFile` and calling `progress` as each test that
 * runs starts (and every minute with the elapsed time, as the suite is slow).
 */
export async function runSuite(
  o: SuiteOptions,
  logFile: string,
  progress: (line: string) => void,
): Promise<SuiteRun> {
  const started = Date.now();
  const bin = await ensurePeer("gateway-conformance");
  const child = new Deno.Command(bin, {
    args: suiteArgs(o),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const log = await Deno.open(logFile, { create: true, write: true, truncate: true });
  const tests: TestEnd[] = [];
  const tick = setInterval(() => {
    progress(`… ${Math.round((Date.now() - started) / 1000)} s`);
  }, 60_000);
  // `go test -v` prints a subtest's verdict only when its parent ends, so progress is the start
  // of each test that is not skipped at once (the suite skips unsupported ones on its first line).
  let pending: string | undefined;
  const onLine = (line: string) => {
    const end = parseTestEnd(line);
    if (end && !end.name.includes("/")) tests.push(end);
    const run = line.match(/^=== RUN\s+TestConformance\/([^/\s]+)$/);
    if (run) {
      pending = run[1];
      return;
    }
    if (pending && !/Skipping /.test(line)) progress(`running ${pending}`);
    pending = undefined;
  };
  const pump = async (stream: ReadableStream<Uint8Array>) => {
    let rest = "";
    for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
      await log.write(new TextEncoder().encode(chunk));
      const lines = (rest + chunk).split("\n");
      rest = lines.pop() ?? "";
      lines.forEach(onLine);
    }
  };
  try {
    await Promise.all([pump(child.stdout), pump(child.stderr)]);
    const { code } = await child.status;
    return { code, ms: Date.now() - started, tests };
  } finally {
    clearInterval(tick);
    log.close();
  }
}
