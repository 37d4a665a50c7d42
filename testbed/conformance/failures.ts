/**
 * Why a conformance run failed, in words a CI log alone explains: which tests failed (from the
 * report's gate and from `go test -v`'s own verdicts, which also cover tests outside every
 * profile, such as provisional ones), where the whole suite log is, and the suite's own failure
 * lines — the tail of each failed test's part of the log.
 * @module
 */
import type { Gate } from "./report.ts";
import type { SuiteRun } from "./suite.ts";

/**
 * The log split by top-level test: `=== RUN   TestConformance/<name>` starts a test's part, which
 * runs to the next top-level start (the suite runs its tests one after another). Subtests and
 * `=== PAUSE`/`=== CONT` lines stay inside their parent's part (pure).
 */
export function testSections(log: string): Map<string, string[]> {
  const sections = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of log.split("\n")) {
    const start = line.match(/^=== RUN\s+TestConformance\/([^/\s]+)$/);
    if (start) {
      current = [];
      sections.set(start[1], current);
    }
    current?.push(line);
  }
  return sections;
}

/** Lines of a part that say nothing: the verdict block of passed subtests, blank lines. */
const noise = (l: string) => l.trim() === "" || /^\s*--- (PASS|SKIP):/.test(l);

/** Top-level tests that failed, from the gate and the run's verdicts, without repeats (pure). */
export function failedTests(g: Gate, run: Pick<SuiteRun, "tests">): string[] {
  const names = new Set<string>();
  for (const f of g.failures) f.tests.forEach((t) => names.add(t));
  for (const t of run.tests) if (t.verdict === "FAIL") names.add(t.name);
  return [...names].sort();
}

/** Whether the run passes: the gate, no failed test, and the suite binary exited 0 (pure). */
export function runPassed(g: Gate, run: Pick<SuiteRun, "tests" | "code">): boolean {
  return g.ok && run.code === 0 && failedTests(g, run).length === 0;
}

/** Options of {@link failureMessage}. */
export interface FailureInput {
  gate: Gate;
  run: Pick<SuiteRun, "tests" | "code">;
  logFile: string;
  /** The whole suite log. */
  log: string;
  /** Lines of each failed test's part to show (default 25). */
  linesPerTest?: number;
  /** Failed tests to show lines of (default 6; the rest are named). */
  maxTests?: number;
}

/**
 * The message of a failed run (pure): the failed tests by profile and part, the suite's exit code,
 * the log's path, then the last lines of each failed test's part of the log — or, when no test is
 * named (the suite failed in its setup or timed out), the last lines of the whole log.
 */
export function failureMessage(i: FailureInput): string {
  const per = i.linesPerTest ?? 25;
  const maxTests = i.maxTests ?? 6;
  const failed = failedTests(i.gate, i.run);
  const out = [
    `official conformance suite failed (exit ${i.run.code}): ${
      failed.join(", ") || "no test named"
    }`,
  ];
  for (const f of i.gate.failures) {
    out.push(
      `  ${f.profile} ${f.part}: ${f.tests.join(", ") || "(result failure, no test named)"}`,
    );
  }
  const outside = failed.filter((t) => !i.gate.failures.some((f) => f.tests.includes(t)));
  if (outside.length) out.push(`  outside the profiles' report: ${outside.join(", ")}`);
  out.push(`suite log: ${i.logFile}`);
  const sections = testSections(i.log);
  const shown = failed.filter((t) => sections.has(t)).slice(0, maxTests);
  for (const t of shown) {
    const lines = sections.get(t)!.filter((l) => !noise(l)).slice(-per);
    out.push(`----- ${t}: last ${lines.length} lines of its log -----`, ...lines);
  }
  if (shown.length < failed.length) {
    const rest = failed.filter((t) => !shown.includes(t));
    out.push(`(${rest.join(", ")}: see the suite log)`);
  }
  if (shown.length === 0) {
    const lines = i.log.split("\n").filter((l) => !noise(l)).slice(-Math.max(per, 40));
    out.push(`----- last ${lines.length} lines of the suite log -----`, ...lines);
  }
  return out.join("\n");
}
