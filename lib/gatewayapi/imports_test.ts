import { assertEquals } from "../../testbed/assert.ts";
import { importEndpoints } from "./imports.ts";
import type { ClusterSetEndpointsSpec } from "./core_types.ts";

/**
 * Upstream StrictPortConflict (same port name, another number): cluster a exported `tcp` as 42
 * first, cluster b later as 4242. The import's port is a's (oldest wins), and only a's endpoints
 * serve it; a record without its Service port (older registrars) still matches by name.
 */
Deno.test("importEndpoints: a port reaches only the clusters exporting it with that number", () => {
  const spec: ClusterSetEndpointsSpec = {
    endpoints: [
      {
        cluster: "a",
        address: "10.1.0.5",
        ports: [{ name: "tcp", protocol: "TCP", port: 8042, servicePort: 42 }],
        priority: 0,
      },
      {
        cluster: "b",
        address: "10.2.0.5",
        ports: [{ name: "tcp", protocol: "TCP", port: 8042, servicePort: 4242 }],
        priority: 1,
      },
      {
        cluster: "c",
        address: "10.3.0.5",
        ports: [{ name: "tcp", protocol: "TCP", port: 8042 }],
        priority: 1,
      },
    ],
  };
  const addresses = (port: number) =>
    importEndpoints(spec, { name: "tcp", protocol: "TCP", port }).map((e) => e.address);
  assertEquals(addresses(42), ["10.1.0.5", "10.3.0.5"]);
  assertEquals(addresses(4242), ["10.2.0.5", "10.3.0.5"]);
  assertEquals(importEndpoints(spec, { name: "udp", protocol: "UDP", port: 42 }), []);
});

Deno.test("importEndpoints: a UDP port's endpoints carry no identity, none behind a gateway", () => {
  const ports = [
    { name: "tcp", protocol: "TCP", port: 4200, servicePort: 42 },
    { name: "udp", protocol: "UDP", port: 4201, servicePort: 42 },
  ];
  const spec: ClusterSetEndpointsSpec = {
    endpoints: [
      { cluster: "a", address: "10.1.0.5", ports, identity: "spiffe://td/ns/s/sa/h", priority: 0 },
      {
        cluster: "b",
        address: "10.2.0.5",
        ports,
        identity: "spiffe://td/ns/s/sa/h",
        priority: 1,
        gateway: "192.0.2.1:15443",
      },
    ],
  };
  assertEquals(importEndpoints(spec, { name: "udp", protocol: "UDP", port: 42 }), [
    { address: "10.1.0.5", port: 4201 },
  ]);
  assertEquals(importEndpoints(spec, { name: "tcp", protocol: "TCP", port: 42 })[0], {
    address: "10.1.0.5",
    port: 4200,
    identity: "spiffe://td/ns/s/sa/h",
  });
});
