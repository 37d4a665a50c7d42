import assert from "node:assert/strict";
import { gate, parseReport, reportTable } from "./report.ts";

const report = (http: string, grpc: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: ConformanceReport
date: "2026-12-01T13:00:00Z"
gatewayAPIChannel: standard
gatewayAPIVersion: v1.5.1
implementation: {organization: aether, project: aether, version: dev}
mode: default
profiles:
- name: GATEWAY-HTTP
  summary: x
${http}
- name: GATEWAY-GRPC
  summary: y
${grpc}
`;

const pass = `  core:
    result: success
    statistics: {Failed: 0, Passed: 33, Skipped: 0}
  extended:
    result: success
    statistics: {Failed: 0, Passed: 4, Skipped: 0}
    supportedFeatures: [HTTPRouteQueryParamMatching, HTTPRouteMethodMatching]`;

Deno.test("conformance report: all passed → the gate is open, the table counts", () => {
  const r = parseReport(report(pass, pass.replace("Passed: 33", "Passed: 12")));
  assert.deepEqual(gate(r), { failures: [], ok: true });
  const t = reportTable(r);
  assert.match(
    t,
    /\| GATEWAY-HTTP \| 33 passed, 0 failed, 0 skipped \| 4 passed, 0 failed, 0 skipped \| 2 \|/,
  );
  assert.match(t, /\| GATEWAY-GRPC \| 12 passed/);
});

Deno.test("conformance report: a failed core or extended test closes the gate and is named", () => {
  const core = pass.replace("result: success", "result: failure").replace(
    "Failed: 0, Passed: 33, Skipped: 0}",
    "Failed: 1, Passed: 32, Skipped: 0}\n    failedTests: [HTTPRouteRedirectPath]",
  );
  const ext = pass.replace(
    "    result: success\n    statistics: {Failed: 0, Passed: 4",
    "    result: failure\n    failedTests: [GRPCRouteWeight]\n    statistics: {Failed: 1, Passed: 3",
  );
  const g = gate(parseReport(report(core, ext)));
  assert.equal(g.ok, false);
  assert.deepEqual(g.failures, [
    { profile: "GATEWAY-HTTP", part: "core", tests: ["HTTPRouteRedirectPath"] },
    { profile: "GATEWAY-GRPC", part: "extended", tests: ["GRPCRouteWeight"] },
  ]);
});

Deno.test("conformance report: a setup failure without named tests closes the gate", () => {
  const setup = pass.replace("result: success", "result: failure");
  const g = gate(parseReport(report(setup, pass)));
  assert.deepEqual(g.failures, [{ profile: "GATEWAY-HTTP", part: "core", tests: [] }]);
});

Deno.test("conformance report: anything else is refused with a reason", () => {
  assert.throws(() => parseReport("kind: Pod\n"), /not a Gateway API ConformanceReport/);
});
