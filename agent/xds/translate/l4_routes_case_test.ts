/**
 * The translate golden case `l4_routes` is exactly resolve's IR of the resolve golden case of the
 * same name (lib/gatewayapi/testdata/l4_routes.in.yaml), so TCPRoute, TLSRoute (Passthrough and
 * Terminate) and UDPRoute are covered from Gateway API objects to Envoy resources, and the
 * translate case is validated by a real Envoy with the other cases. UPDATE_GOLDEN=1 rewrites it.
 */
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { checkGolden, readYamlDocsStrict } from "../../../testbed/golden.ts";
import { resolveLoadingCel } from "../../../lib/gatewayapi/_test_utils.ts";
import type { KubeObject } from "../../../lib/gatewayapi/mod.ts";
import { testdataDir, toYaml } from "./_test_utils.ts";

Deno.test("translate case l4_routes is resolve's IR of the l4_routes resolve case", async () => {
  const input = new URL("../../../lib/gatewayapi/testdata/l4_routes.in.yaml", import.meta.url);
  const objects = readYamlDocsStrict(fileURLToPath(input)) as KubeObject[];
  const header = "# Generated from lib/gatewayapi/testdata/l4_routes.in.yaml by resolve " +
    "(l4_routes_case_test.ts; UPDATE_GOLDEN=1 rewrites it).\n";
  const text = header + toYaml((await resolveLoadingCel(objects)).ir);
  checkGolden(join(testdataDir, "l4_routes.in.yaml"), text, "deno test -A agent/xds/translate");
});
