/**
 * Test support: cluster b's exported `shop/web` — one EndpointSlice of two ready pods (target port
 * 8080, Service port 80) and their ServiceAccount `web` — for the east-west tests.
 * @module
 */

/** A fresh copy of the fixture for one test. */
export function eastWestFixture() {
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
  return { slices, pods, servicePorts };
}
