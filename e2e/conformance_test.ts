/**
 * The official Gateway API v1.5.1 conformance suite (profiles GATEWAY-HTTP, GATEWAY-GRPC,
 * GATEWAY-TLS, MESH-HTTP and MESH-GRPC: core plus every extended feature aether advertises in
 * GatewayClass and XMesh `supportedFeatures`; the mesh through the node agents' transparent
 * capture), and the tests outside every profile whose features aether advertises
 * (UDPRoute: the cluster gets the experimental channel's CRDs for the run, testbed/conformance/channel.ts),
 * against the local cluster with aether installed by its chart. Regenerates
 * the committed docs/conformance/v1.5.1-aether-report.yaml. Fails on any core failure, any failure
 * of an advertised extended test, any other failed test of the run (e.g. a provisional one) and a
 * non-zero exit of the suite (testbed/conformance: `gate`, `runPassed`); the message names the tests,
 * the suite log, and the tail of each failed test's own log lines.
 */
import assert from "node:assert/strict";
import {
  brokenUpstream,
  defaultProfiles,
  parseReport,
  reportPath,
  reportTable,
  runConformance,
} from "../testbed/conformance/mod.ts";

Deno.test({
  name:
    "official Gateway API conformance v1.5.1: GATEWAY-HTTP/GRPC/TLS, MESH-HTTP/GRPC core + advertised extended",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const r = await runConformance();
    console.log(
      `suite ${Math.round(r.run.ms / 1000)} s, exit ${r.run.code}, ${r.run.tests.length} tests ` +
        `run or skipped, ${r.features.length} features advertised\n${reportTable(r.report)}`,
    );
    assert.ok(r.passed, r.explanation ?? "failed");

    // The committed report is the one this run wrote, with every profile asked for.
    assert.equal(r.reportFile, reportPath);
    const onDisk = parseReport(await Deno.readTextFile(reportPath));
    assert.equal(onDisk.gatewayAPIVersion, "v1.5.1");
    assert.equal(onDisk.date, r.report.date);
    for (const name of defaultProfiles) {
      const p = onDisk.profiles.find((x) => x.name === name);
      assert.ok(p, `${name} in the report`);
      assert.ok(p.core.statistics.Passed > 0, `${name} core ran`);
      assert.equal(p.core.statistics.Failed, 0, `${name} core`);
      // Every advertised extended feature of the profile was tested, none left out.
      const left = (p.extended?.unsupportedFeatures ?? []).filter((f) => r.features.includes(f));
      assert.deepEqual(left, [], `${name}: advertised features the suite did not test`);
    }
    const http = onDisk.profiles.find((x) => x.name === "GATEWAY-HTTP")!;
    assert.ok((http.extended?.statistics.Passed ?? 0) > 0, "GATEWAY-HTTP extended tests ran");

    // The experimental channel's kinds: the controller advertises them once their CRDs are there,
    // and the suite's UDPRoute test (provisional, in no profile) passed. v1.5.1 has no TCPRoute
    // test.
    assert.equal(onDisk.gatewayAPIChannel, "experimental");
    assert.ok(r.features.includes("UDPRoute") && r.features.includes("TCPRoute"), `${r.features}`);
    assert.equal(r.run.tests.find((t) => t.name === "UDPRoute")?.verdict, "PASS", "UDPRoute ran");
    assert.ok(onDisk.succeededProvisionalTests?.includes("UDPRoute"), "UDPRoute in the report");

    // The mesh, through transparent capture: MESH-HTTP core 7/7 and every MESH extended test
    // (its features from the XMesh's status), MESH-GRPC, and the mesh tests of no profile
    // (their HTTPRoute features come from the GatewayClass).
    const meshHttp = onDisk.profiles.find((x) => x.name === "MESH-HTTP")!;
    assert.equal(meshHttp.core.statistics.Passed, 7, "MESH-HTTP core 7/7");
    assert.equal(meshHttp.extended?.statistics.Failed ?? 0, 0, "MESH-HTTP extended");
    assert.ok((meshHttp.extended?.statistics.Passed ?? 0) >= 7, "every MESH extended test ran");
    for (const name of ["MeshFrontend", "MeshFrontendHostname", "MeshPorts", "MeshConsumerRoute"]) {
      assert.equal(r.run.tests.find((t) => t.name === name)?.verdict, "PASS", `${name} passed`);
    }
    for (const name of Object.keys(brokenUpstream)) {
      assert.notEqual(r.run.tests.find((t) => t.name === name)?.verdict, "FAIL", `${name} skipped`);
    }
  },
});
