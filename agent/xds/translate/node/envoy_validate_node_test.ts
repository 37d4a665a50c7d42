import assert from "node:assert/strict";
import { ensurePeer } from "../../../../testbed/peers/mod.ts";
import { envoyValidate } from "../_test_utils.ts";
import { translateNode } from "./mod.ts";
import { nodeGoldenCases, nodeStaticBootstrap } from "./_test_utils.ts";
import { makeCert } from "../../../../e2e/tls.ts";

Deno.test("real Envoy 1.40 accepts every node golden case (envoy --mode validate)", async () => {
  const envoy = await ensurePeer("envoy");
  const cases = nodeGoldenCases();
  // SVIDs and bundles come over SDS at run time; validate mode gets a test certificate instead.
  const tls = await makeCert(["placeholder.test"]);
  // A case without internal listeners must also load into an Envoy whose (older) bootstrap has
  // no internal-listener extension: that is what such an Envoy gets from the agent.
  const results = await Promise.allSettled(
    cases.map(({ mesh, view, options }) =>
      envoyValidate(
        envoy,
        nodeStaticBootstrap(translateNode(mesh, view, options), tls, {
          internalListener: options?.internalListeners === true,
        }),
      )
    ),
  );
  const failures = results.flatMap((r, i) =>
    r.status === "rejected" ? [`${cases[i].name}: ${(r.reason as Error).message}`] : []
  );
  assert.deepEqual(failures, []);
});

Deno.test("an Envoy without the internal-listener extension rejects internal listeners (why the capability gates them)", async () => {
  const envoy = await ensurePeer("envoy");
  const c = nodeGoldenCases().find((x) => x.name === "identity")!;
  assert.equal(c.options?.internalListeners, true);
  const tls = await makeCert(["placeholder.test"]);
  const bootstrap = nodeStaticBootstrap(translateNode(c.mesh, c.view, c.options), tls, {
    internalListener: false,
  });
  await assert.rejects(envoyValidate(envoy, bootstrap), /internal/i);
});
