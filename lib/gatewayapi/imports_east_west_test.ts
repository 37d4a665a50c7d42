import assert from "node:assert/strict";
import { clusterSetEndpoints, endpointRecords } from "../mcs/mod.ts";
import { importEndpoints } from "./imports.ts";
import { eastWestFixture } from "../mcs/_east_west_test_utils.ts";

Deno.test("east-west: another cluster's gatewayed pods are dialled at its gateway, same SNI port and identity; own cluster's directly", () => {
  const { pods, servicePorts, slices } = eastWestFixture();
  const b = endpointRecords(
    "b.eu",
    new Set(["shop/web"]),
    slices,
    pods,
    "b.example",
    servicePorts,
    "192.0.2.7:15443",
  );
  const web = "spiffe://b.example/ns/shop/sa/web";
  // Seen from cluster a: both of b's pods are one endpoint at b's gateway, weight 2.
  const fromA = clusterSetEndpoints(b.values(), "a.eu").byService.get("shop/web")!;
  const eps = importEndpoints({ endpoints: fromA }, { name: "http", protocol: "TCP", port: 80 });
  assert.deepEqual(eps, [{
    address: "192.0.2.7",
    port: 15443,
    identity: web,
    priority: 1,
    dialAt: { address: "192.0.2.7", port: 15443 },
    weight: 2,
  }]);
  // Seen from cluster b itself: its own pods directly (no gateway).
  const fromB = clusterSetEndpoints(b.values(), "b.eu").byService.get("shop/web")!;
  const own = importEndpoints({ endpoints: fromB }, { name: "http", protocol: "TCP", port: 80 });
  assert.deepEqual(own.map((e) => [e.address, e.port, e.dialAt]), [
    ["10.2.0.5", 8080, undefined],
    ["10.2.0.6", 8080, undefined],
  ]);
});
