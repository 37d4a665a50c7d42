import assert from "node:assert/strict";
import { TypeUrl } from "../xds/proto.ts";
import { onDemandRequests } from "./on_demand_names.ts";

Deno.test("on-demand names: CDS names and VHDS aliases grouped by caller", () => {
  assert.deepEqual(
    [...onDemandRequests(TypeUrl.cluster, ["web.mesh:8080", "api.mesh|shop/checkout"])],
    [[undefined, ["web.mesh:8080"]], ["shop/checkout", ["api.mesh"]]],
  );
  assert.deepEqual(
    [
      ...onDemandRequests(TypeUrl.virtualHost, [
        "outbound./Web.Shop:80",
        "outbound.shop/checkout/api.shop",
        "no-alias",
      ]),
    ],
    [[undefined, ["web.shop:80"]], ["shop/checkout", ["api.shop"]]],
  );
  assert.equal(onDemandRequests(TypeUrl.listener, ["outbound./x"]).size, 0);
});
