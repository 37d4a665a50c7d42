/**
 * The upstream Gateway API `ConformanceReport` (the YAML the suite writes with `-report-output`):
 * parsing, the table `deno task conformance` prints and the README carries, and the gate — a
 * failed core test, or a failed extended test of a feature aether advertises, fails the run.
 * @module
 */
import { parse } from "yaml";

/** Passed / skipped / failed counts of one part of a profile. */
export interface Statistics {
  Passed: number;
  Skipped: number;
  Failed: number;
}

/** Core or extended results of one profile. */
export interface PartStatus {
  result: "success" | "partial" | "failure" | string;
  statistics: Statistics;
  skippedTests?: string[];
  failedTests?: string[];
  supportedFeatures?: string[];
  unsupportedFeatures?: string[];
}

/** One conformance profile's results. */
export interface ProfileReport {
  name: string;
  summary: string;
  core: PartStatus;
  extended?: PartStatus;
}

/** The fields of the upstream report this project reads. */
export interface ConformanceReport {
  apiVersion: string;
  kind: "ConformanceReport";
  date: string;
  gatewayAPIVersion: string;
  gatewayAPIChannel: string;
  mode: string;
  implementation: { organization: string; project: string; version: string };
  profiles: ProfileReport[];
  succeededProvisionalTests?: string[];
}

/** Parses the suite's report; throws with what is wrong when it is not one. */
export function parseReport(text: string): ConformanceReport {
  const r = parse(text) as ConformanceReport | null;
  if (!r || r.kind !== "ConformanceReport" || !Array.isArray(r.profiles)) {
    throw new Error("not a Gateway API ConformanceReport (kind or profiles missing)");
  }
  return r;
}

/** What makes the run fail: failed core tests and failed extended tests, per profile. */
export interface Gate {
  failures: { profile: string; part: "core" | "extended"; tests: string[] }[];
  ok: boolean;
}

/**
 * The gate. The suite only runs extended tests of the features passed to it (aether's advertised
 * `supportedFeatures`), so every extended failure is a failure of an advertised feature. A part
 * whose result is `failure` without named tests (setup failed) fails too.
 */
export function gate(r: ConformanceReport): Gate {
  const failures: Gate["failures"] = [];
  for (const p of r.profiles) {
    for (const part of ["core", "extended"] as const) {
      const s = p[part];
      if (!s) continue;
      const tests = s.failedTests ?? [];
      if (tests.length > 0 || s.statistics?.Failed > 0 || s.result === "failure") {
        failures.push({ profile: p.name, part, tests });
      }
    }
  }
  return { failures, ok: failures.length === 0 };
}

const cell = (s?: PartStatus) =>
  s
    ? `${s.statistics.Passed} passed, ${s.statistics.Failed} failed, ${s.statistics.Skipped} skipped`
    : "—";

/** A Markdown table of the report: one row per profile, core and extended counts. */
export function reportTable(r: ConformanceReport): string {
  const rows = [
    "| Profile | Core | Extended | Extended features run |",
    "| ------- | ---- | -------- | --------------------- |",
  ];
  for (const p of r.profiles) {
    const feats = p.extended?.supportedFeatures?.length ?? 0;
    rows.push(`| ${p.name} | ${cell(p.core)} | ${cell(p.extended)} | ${feats} |`);
  }
  return rows.join("\n");
}
