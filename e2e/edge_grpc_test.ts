/** Real Envoy 1.40: GRPCRoute service/method and header matches to real gRPC backends over h2c. */
import { assertEquals } from "../testbed/assert.ts";
import { callGrpc, startGrpcEcho } from "./echo/grpc_server.ts";
import { freePort, gateway, gatewayClass, startEdge } from "./harness.ts";
import type { SourceObject } from "../lib/source/mod.ts";

const paths = ["/aether.test.Echo/Hello", "/aether.test.Echo/Bye", "/other.Svc/Hello"];

function grpcService(name: string, port: number): SourceObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "default" },
      spec: {
        ports: [{ name: "grpc", port: 9000, targetPort: port, appProtocol: "kubernetes.io/h2c" }],
      },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace: "default", labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "grpc", port }],
      endpoints: [{ addresses: ["127.0.0.1"] }],
    },
  ];
}

Deno.test("edge e2e: GRPCRoute on real Envoy to real gRPC backends", async () => {
  const backends = await Promise.all(
    ["g-default", "g-method", "g-service", "g-header"].map((n) => startGrpcEcho(n, paths)),
  );
  const port = freePort();
  const ref = (name: string) => ({ name, port: 9000 });
  const edge = await startEdge([
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...backends.flatMap((b) => grpcService(b.name, b.port)),
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GRPCRoute",
      metadata: {
        name: "grpc",
        namespace: "default",
        generation: 1,
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      spec: {
        parentRefs: [{ name: "gw" }],
        hostnames: ["grpc.example.com"],
        rules: [
          { backendRefs: [ref("g-default")] },
          {
            matches: [{ method: { service: "aether.test.Echo", method: "Bye" } }],
            backendRefs: [ref("g-method")],
          },
          { matches: [{ method: { service: "other.Svc" } }], backendRefs: [ref("g-service")] },
          {
            matches: [{ headers: [{ name: "x-tenant", value: "blue" }] }],
            backendRefs: [ref("g-header")],
          },
        ],
      },
    },
  ]);
  const target = `127.0.0.1:${port}`;
  try {
    assertEquals(
      (await callGrpc(target, "grpc.example.com", "/aether.test.Echo/Hello")).backend,
      "g-default",
    );
    assertEquals(
      (await callGrpc(target, "grpc.example.com", "/aether.test.Echo/Bye")).backend,
      "g-method",
    );
    assertEquals(
      (await callGrpc(target, "grpc.example.com", "/other.Svc/Hello")).backend,
      "g-service",
    );
    const viaHeader = await callGrpc(target, "grpc.example.com", "/aether.test.Echo/Hello", {
      "x-tenant": "blue",
    });
    assertEquals(viaHeader.backend, "g-header");
    assertEquals(viaHeader.metadata["x-tenant"], "blue");
  } finally {
    await edge.close();
    for (const b of backends) await b.close();
  }
});
