import assert from "node:assert/strict";
import { endpointRecords, type EndpointSliceShape, parseEndpointRecord } from "./endpoints.ts";

const ep = (ip: string, pod: string, ready = true) => ({
  addresses: [ip],
  conditions: { ready },
  nodeName: "node-1",
  zone: "z1",
  targetRef: { kind: "Pod", name: pod },
});

const slice = (
  service: string,
  addressType: string,
  endpoints: ReturnType<typeof ep>[],
): EndpointSliceShape => ({
  metadata: { namespace: "shop", labels: { "kubernetes.io/service-name": service } },
  addressType,
  ports: [{ name: "http", protocol: "TCP", port: 8080 }],
  endpoints,
});
Deno.test("mcs endpoints: ready endpoints of exported Services, with their pod's identity", () => {
  const pods = new Map([["shop/web-1", {
    namespace: "shop",
    name: "web-1",
    serviceAccount: "web",
  }]]);
  const got = endpointRecords(
    "a.eu",
    new Set(["shop/web"]),
    [
      slice("web", "IPv4", [ep("10.1.0.5", "web-1"), ep("10.1.0.6", "web-2", false)]),
      slice("web", "IPv6", [ep("fd00::5", "web-1")]),
      slice("db", "IPv4", [ep("10.1.0.7", "db-1")]), // not exported
    ],
    pods,
    "cluster.local",
  );
  assert.deepEqual([...got.keys()], ["eps/shop/web/web-1"]);
  assert.deepEqual(parseEndpointRecord(got.get("eps/shop/web/web-1")!), {
    cluster: "a.eu",
    namespace: "shop",
    service: "web",
    pod: "web-1",
    ip: "10.1.0.5",
    ports: [{ name: "http", protocol: "TCP", port: 8080 }],
    node: "node-1",
    zone: "z1",
    serviceAccount: "web",
    spiffeId: "spiffe://cluster.local/ns/shop/sa/web",
  });
});

Deno.test("mcs endpoints: a registry value is read back only when it is a whole record", () => {
  for (
    const bad of [
      "x",
      "null",
      "{}",
      '{"cluster":"a","namespace":"n","service":"s","pod":"p","ip":"1","ports":[{"port":1}]}',
      '{"cluster":"a","namespace":"n","service":"s","pod":"p","ip":"1","ports":' +
      '[{"name":"","protocol":"TCP","port":1,"servicePort":"42"}]}',
    ]
  ) {
    assert.equal(parseEndpointRecord(bad), undefined, bad);
  }
});

Deno.test("mcs endpoints: each port carries its Service's port number when the Service is known", () => {
  const got = endpointRecords(
    "b.eu",
    new Set(["shop/web"]),
    [{ ...slice("web", "IPv4", [ep("10.2.0.5", "web-1")]) }],
    new Map(),
    undefined,
    new Map([["shop/web", [{ name: "tcp", protocol: "TCP", port: 42 }, {
      name: "http",
      port: 4242,
    }]]]),
  );
  assert.deepEqual(parseEndpointRecord(got.get("eps/shop/web/web-1")!)?.ports, [
    { name: "http", protocol: "TCP", port: 8080, servicePort: 4242 },
  ]);
});
