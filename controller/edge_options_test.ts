/**
 * The controller's resolve options with edges: a Gateway `spec.addresses` entry inside the
 * LoadBalancer's pools is usable, one outside is Programmed=False AddressNotUsable.
 */
import assert from "node:assert/strict";
import { resolve } from "../lib/gatewayapi/mod.ts";
import type { KubeObject } from "../lib/gatewayapi/mod.ts";
import { gateway, gatewayClass } from "../testbed/fixtures/objects.ts";
import { edgeResolveOptions } from "./run.ts";

const edge = { namespace: "aether-system", image: "aether:dev", serviceAccount: "aether-edge" };

const objects = (address: string): KubeObject[] => [
  gatewayClass(),
  gateway("gw", [{ name: "http", port: 8080, protocol: "HTTP" }], "infra", {
    addresses: [{ type: "IPAddress", value: address }],
  }),
];

function programmed(address: string, pools?: string[]) {
  const { statuses } = resolve(
    objects(address),
    edgeResolveOptions({ ...edge, addressPools: pools }),
  );
  const gw = statuses.find((s) => s.kind === "Gateway")!;
  // deno-lint-ignore no-explicit-any
  return (gw.status as any).conditions.find((c: any) => c.type === "Programmed");
}

Deno.test("edge resolve options: addresses in the LoadBalancer's pools are usable, others not", () => {
  assert.equal(programmed("10.216.0.200", ["10.216.0.0/24"]).status, "True");
  const outside = programmed("192.0.2.1", ["10.216.0.0/24"]);
  assert.equal(outside.status, "False");
  assert.equal(outside.reason, "AddressNotUsable");
  // No pools given: the LoadBalancer decides, any address is asked for.
  assert.equal(programmed("192.0.2.1").status, "True");
  assert.deepEqual(edgeResolveOptions(undefined), {});
});

Deno.test("edge resolve options: a feature the edges fail is not advertised", () => {
  const gc = (options: Record<string, unknown>) => {
    const { statuses } = resolve(objects("10.216.0.200"), options);
    // deno-lint-ignore no-explicit-any
    const st = statuses.find((s) => s.kind === "GatewayClass")!.status as any;
    return st.supportedFeatures.map((f: { name: string }) => f.name) as string[];
  };
  assert.ok(gc({}).includes("GatewayStaticAddresses"), "file mode: advertised");
  const withEdges = gc(edgeResolveOptions(edge));
  assert.ok(!withEdges.includes("GatewayStaticAddresses"), withEdges.join(","));
  // The edges keep the Host port (HTTPRouteListenerPortMatching passes): advertised.
  assert.ok(withEdges.includes("HTTPRouteParentRefPort"), withEdges.join(","));
  assert.ok(withEdges.includes("HTTPRoute") && withEdges.includes("Gateway"));
});
