import assert from "node:assert/strict";
import { failedTests, failureMessage, runPassed, testSections } from "./failures.ts";
import type { Gate } from "./report.ts";

const log = [
  "=== RUN   TestConformance",
  "=== RUN   TestConformance/HTTPRouteSimpleSameNamespace",
  "    helpers.go:100: Gateway accepted",
  "--- PASS: TestConformance/HTTPRouteSimpleSameNamespace (2.0s)",
  "=== RUN   TestConformance/HTTPRouteWeight",
  "=== RUN   TestConformance/HTTPRouteWeight/Requests_should_have_a_distribution",
  "    weight.go:80: ",
  "        \tError Trace:\tweight.go:80",
  "        \tError:      \tgot 55/45, want 70/30 ±5",
  "=== RUN   TestConformance/UDPRoute",
  "    udproute-simple.go:60: failed to perform DNS query: timed out",
  "--- FAIL: TestConformance (60.0s)",
  "    --- PASS: TestConformance/HTTPRouteSimpleSameNamespace (2.0s)",
  "    --- FAIL: TestConformance/HTTPRouteWeight (30.0s)",
  "        --- FAIL: TestConformance/HTTPRouteWeight/Requests_should_have_a_distribution (30.0s)",
  "    --- FAIL: TestConformance/UDPRoute (30.0s)",
  "FAIL",
].join("\n");

const gate: Gate = {
  ok: false,
  failures: [{ profile: "GATEWAY-HTTP", part: "extended", tests: ["HTTPRouteWeight"] }],
};
const run = {
  code: 1,
  tests: [
    { verdict: "PASS" as const, name: "HTTPRouteSimpleSameNamespace", seconds: 2 },
    { verdict: "FAIL" as const, name: "HTTPRouteWeight", seconds: 30 },
    { verdict: "FAIL" as const, name: "UDPRoute", seconds: 30 },
  ],
};

Deno.test("test sections: one per top-level test, subtests inside their parent", () => {
  const s = testSections(log);
  assert.deepEqual([...s.keys()], ["HTTPRouteSimpleSameNamespace", "HTTPRouteWeight", "UDPRoute"]);
  assert.ok(s.get("HTTPRouteWeight")!.some((l) => l.includes("got 55/45")));
  assert.ok(!s.get("HTTPRouteSimpleSameNamespace")!.some((l) => l.includes("Error")));
});

Deno.test("failed tests: the gate's and the run's verdicts (a provisional test has no profile)", () => {
  assert.deepEqual(failedTests(gate, run), ["HTTPRouteWeight", "UDPRoute"]);
  assert.equal(runPassed(gate, run), false);
  const clean: Gate = { ok: true, failures: [] };
  assert.equal(runPassed(clean, { code: 0, tests: [run.tests[0]] }), true);
  assert.equal(runPassed(clean, { code: 2, tests: [] }), false, "a non-zero exit fails");
  assert.equal(runPassed(clean, { code: 1, tests: run.tests }), false);
});

Deno.test("failure message: names the tests and the log, shows each one's own failure lines", () => {
  const m = failureMessage({ gate, run, logFile: "/x/suite.log", log });
  assert.match(m, /exit 1\): HTTPRouteWeight, UDPRoute/);
  assert.match(m, /GATEWAY-HTTP extended: HTTPRouteWeight/);
  assert.match(m, /outside the profiles' report: UDPRoute/);
  assert.match(m, /suite log: \/x\/suite.log/);
  assert.match(m, /----- HTTPRouteWeight: last \d+ lines of its log -----[^]*got 55\/45/);
  assert.match(m, /----- UDPRoute: [^]*failed to perform DNS query/);
  const weight = m.split("----- HTTPRouteWeight")[1].split("----- UDPRoute")[0];
  assert.ok(!weight.includes("DNS query"), "a test's lines are its own");
});

Deno.test("failure message: no test named (setup failed) → the tail of the whole log", () => {
  const setup = "=== RUN   TestConformance\n    suite.go:380: unable to apply base manifests\nFAIL";
  const m = failureMessage({
    gate: { ok: false, failures: [{ profile: "GATEWAY-HTTP", part: "core", tests: [] }] },
    run: { code: 1, tests: [] },
    logFile: "/x/suite.log",
    log: setup,
  });
  assert.match(m, /no test named/);
  assert.match(m, /GATEWAY-HTTP core: \(result failure, no test named\)/);
  assert.match(m, /last 3 lines of the suite log[^]*unable to apply base manifests/);
});

Deno.test("failure message: caps the tests it shows lines of and names the rest", () => {
  const m = failureMessage({ gate, run, logFile: "/l", log, maxTests: 1, linesPerTest: 2 });
  assert.match(m, /----- HTTPRouteWeight: last 2 lines/);
  assert.match(m, /\(UDPRoute: see the suite log\)/);
});
