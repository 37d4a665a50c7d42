import assert from "node:assert/strict";
import {
  clustersetSni,
  gatewayAddressProblem,
  gatewayEndpoints,
  parseGatewayAddress,
} from "./east_west.ts";
import { endpointRecords, parseEndpointRecord } from "./endpoints.ts";
import { eastWestFixture } from "./_east_west_test_utils.ts";

Deno.test("east-west: gateway addresses are <ip>:<port>", () => {
  assert.deepEqual(parseGatewayAddress("192.0.2.7:15443"), { address: "192.0.2.7", port: 15443 });
  assert.deepEqual(parseGatewayAddress("[fd00::7]:443"), { address: "fd00::7", port: 443 });
  for (const bad of ["gw.example:443", "192.0.2.7", "192.0.2.300:1", "192.0.2.7:0", "[x]:1", ""]) {
    assert.equal(parseGatewayAddress(bad), undefined, bad);
    assert.match(gatewayAddressProblem(bad)!, /not <ip>:<port>/);
  }
});

Deno.test("east-west: endpoints behind one gateway with one identity collapse, weighted", () => {
  const gw = { address: "192.0.2.7", port: 15443 };
  const web = "spiffe://b.example/ns/shop/sa/web";
  const got = gatewayEndpoints([
    { gateway: gw, identity: web, priority: 1 },
    { gateway: gw, identity: web, priority: 1 },
    { gateway: gw, identity: web, priority: 1 },
    { gateway: gw, identity: "spiffe://b.example/ns/shop/sa/other", priority: 1 },
  ]);
  assert.deepEqual(got, [
    {
      address: gw.address,
      port: gw.port,
      identity: "spiffe://b.example/ns/shop/sa/other",
      priority: 1,
      dialAt: gw,
    },
    { address: gw.address, port: gw.port, identity: web, priority: 1, dialAt: gw, weight: 3 },
  ]);
});

Deno.test("east-west: records carry the gateway, checked on read", () => {
  const { pods, servicePorts, slices } = eastWestFixture();
  const recs = endpointRecords(
    "b.eu",
    new Set(["shop/web"]),
    slices,
    pods,
    "b.example",
    servicePorts,
    "192.0.2.7:15443",
  );
  const r = parseEndpointRecord(recs.get("eps/shop/web/web-0")!)!;
  assert.equal(r.gateway, "192.0.2.7:15443");
  const flat = endpointRecords("b.eu", new Set(["shop/web"]), slices, pods, "b.example");
  assert.equal(parseEndpointRecord(flat.get("eps/shop/web/web-0")!)!.gateway, undefined);
  for (const bad of ["gw.example:1", 7, ""]) {
    assert.equal(parseEndpointRecord(JSON.stringify({ ...r, gateway: bad })), undefined);
  }
});

Deno.test("east-west: the clusterset SNI of a Service port", () => {
  assert.equal(clustersetSni("shop", "web", 80), "80.web.shop.svc.clusterset.local");
});
