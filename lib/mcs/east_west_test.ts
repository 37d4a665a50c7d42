import assert from "node:assert/strict";
import { gatewayAddressProblem, gatewayEndpoints, parseGatewayAddress } from "./east_west.ts";
import { endpointRecords, parseEndpointRecord } from "./endpoints.ts";
import { clusterSetEndpoints } from "./clusterset_endpoints.ts";
import { importEndpoints } from "../gatewayapi/imports.ts";
import { loadAssignment } from "../../agent/xds/translate/endpoint.ts";

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

const slices = [{
  metadata: { namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
  addressType: "IPv4",
  ports: [{ name: "http", protocol: "TCP", port: 8080 }],
  endpoints: ["10.2.0.5", "10.2.0.6"].map((ip, i) => ({
    addresses: [ip],
    conditions: { ready: true },
    targetRef: { kind: "Pod", name: `web-${i}` },
  })),
}];
const pods = new Map(
  [0, 1].map((
    i,
  ) => [`shop/web-${i}`, { namespace: "shop", name: `web-${i}`, serviceAccount: "web" }]),
);
const servicePorts = new Map([["shop/web", [{ name: "http", protocol: "TCP", port: 80 }]]]);

Deno.test("east-west: records carry the gateway, checked on read", () => {
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

Deno.test("east-west: another cluster's gatewayed pods are dialled at its gateway, same SNI port and identity; own cluster's directly", () => {
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
  const cla = loadAssignment(
    {
      name: "web.shop.svc.clusterset.local:80",
      port: 80,
      endpoints: eps,
    } as Parameters<typeof loadAssignment>[0],
  );
  // deno-lint-ignore no-explicit-any
  const lb = (cla.resource as any).endpoints[0].lb_endpoints[0];
  assert.deepEqual(lb.endpoint.address.socket_address, { address: "192.0.2.7", port_value: 15443 });
  assert.equal(lb.load_balancing_weight.value, 2);
  assert.equal(
    lb.metadata.filter_metadata["envoy.transport_socket_match"].fields.identity.stringValue,
    web,
  );
  // Seen from cluster b itself: its own pods at podIP:15008, no gateway.
  const fromB = clusterSetEndpoints(b.values(), "b.eu").byService.get("shop/web")!;
  const own = importEndpoints({ endpoints: fromB }, { name: "http", protocol: "TCP", port: 80 });
  assert.deepEqual(own.map((e) => [e.address, e.port, e.dialAt]), [
    ["10.2.0.5", 8080, undefined],
    ["10.2.0.6", 8080, undefined],
  ]);
  const direct = loadAssignment(
    { name: "x", port: 80, endpoints: own } as Parameters<
      typeof loadAssignment
    >[0],
  );
  // deno-lint-ignore no-explicit-any
  const d = (direct.resource as any).endpoints[0].lb_endpoints[0].endpoint.address.socket_address;
  assert.deepEqual(d, { address: "10.2.0.5", port_value: 15008 });
});
