import assert from "node:assert/strict";
import { parseTestEnd, suiteArgs } from "./suite.ts";

Deno.test("suite args: profiles, features, report, one test, generous timeout", () => {
  const args = suiteArgs({
    kubeconfig: "/k/admin.kubeconfig",
    gatewayClass: "aether",
    profiles: ["GATEWAY-HTTP", "GATEWAY-GRPC"],
    features: ["Gateway", "HTTPRoute"],
    reportOutput: "/r.yaml",
    runTest: "HTTPRouteMatching",
    timeoutMinutes: 90,
    implementation: {
      organization: "aether",
      project: "aether",
      version: "dev",
      url: "https://aether.invalid",
      contact: "maintainers",
    },
  });
  assert.ok(args.includes("-test.run=TestConformance"));
  assert.ok(args.includes("-test.timeout=90m"));
  assert.ok(args.includes("-conformance-profiles=GATEWAY-HTTP,GATEWAY-GRPC"));
  assert.ok(args.includes("-supported-features=Gateway,HTTPRoute"));
  assert.ok(args.includes("-report-output=/r.yaml"));
  assert.ok(args.includes("-run-test=HTTPRouteMatching"));
  assert.ok(args.includes("-cleanup-base-resources=true"));
  assert.ok(args.includes("-url=https://aether.invalid"));
});

Deno.test("suite args: several tests run through go test's subtest filter", () => {
  const args = suiteArgs({
    kubeconfig: "/k",
    gatewayClass: "aether",
    profiles: ["GATEWAY-HTTP"],
    features: [],
    reportOutput: "/r.yaml",
    runTest: "HTTPRouteRedirectPort, HTTPRouteRedirectScheme",
    timeoutMinutes: 30,
    implementation: { organization: "o", project: "p", version: "v", url: "u", contact: "c" },
  });
  assert.ok(
    args.includes("-test.run=TestConformance/^(HTTPRouteRedirectPort|HTTPRouteRedirectScheme)$"),
  );
  assert.ok(!args.some((a) => a.startsWith("-run-test")));
});

Deno.test("suite output: a test's end line parses, others do not", () => {
  assert.deepEqual(parseTestEnd("    --- PASS: TestConformance/HTTPRouteMatching (4.12s)"), {
    verdict: "PASS",
    name: "HTTPRouteMatching",
    seconds: 4.12,
  });
  assert.equal(
    parseTestEnd("        --- FAIL: TestConformance/HTTPRouteWeight/0_request (1.00s)")?.name,
    "HTTPRouteWeight/0_request",
  );
  assert.equal(parseTestEnd("=== RUN   TestConformance/HTTPRouteMatching"), undefined);
  assert.equal(parseTestEnd("--- PASS: TestConformance (100.00s)"), undefined);
});
