/**
 * Synthetic Gateway API configurations for benchmarks and the CEL mutation corpus: N services and
 * M HTTPRoutes.
 * @module
 */
import type { KubeObject } from "../gatewayapi/types.ts";
import { lcg } from "./lcg.ts";
import { gateway, gatewayClass } from "./objects.ts";

/** Options for a synthetic config. */
export interface SyntheticOptions {
  services: number;
  routes: number;
  /** Gateway listener port. */
  port: number;
  /** Endpoint address for every service (default 127.0.0.1) and port. */
  endpointPort?: number;
}

/** One HTTPRoute of the synthetic set; `edit` changes only a header value. */
export function syntheticRoute(i: number, services: number, edit = 0): KubeObject {
  const rnd = lcg(i + 1);
  const svc = () => `svc-${Math.floor(rnd() * services)}`;
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      name: `route-${i}`,
      namespace: "default",
      generation: 1 + edit,
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: {
      parentRefs: [{ name: "bench" }],
      hostnames: [`app-${i}.example.com`],
      rules: [
        {
          matches: [{
            path: { type: "PathPrefix", value: "/api" },
            headers: [{ name: "x-version", value: "v2" }],
          }],
          filters: [{
            type: "RequestHeaderModifier",
            requestHeaderModifier: { set: [{ name: "x-edit", value: String(edit) }] },
          }],
          backendRefs: [{ name: svc(), port: 8080, weight: 90 }, {
            name: svc(),
            port: 8080,
            weight: 10,
          }],
        },
        {
          matches: [{ path: { type: "PathPrefix", value: "/" } }],
          filters: [{
            type: "RequestHeaderModifier",
            requestHeaderModifier: { set: [{ name: "x-edit", value: String(edit) }] },
          }],
          timeouts: { request: "10s" },
          backendRefs: [{ name: svc(), port: 8080 }],
        },
      ],
    },
  };
}

/** GatewayClass, one Gateway, `services` Services with EndpointSlices, `routes` HTTPRoutes. */
export function syntheticConfig(o: SyntheticOptions): KubeObject[] {
  const out: KubeObject[] = [
    gatewayClass(),
    gateway("bench", [{ name: "http", protocol: "HTTP", port: o.port }]),
  ];
  for (let s = 0; s < o.services; s++) {
    const name = `svc-${s}`;
    out.push(
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name, namespace: "default" },
        spec: {
          // A cluster IP as the API server assigns one (Envoy Gateway's egctl needs it).
          clusterIP: `10.96.${s >> 8}.${s & 255}`,
          ports: [{ name: "http", port: 8080, targetPort: o.endpointPort ?? 9000 }],
        },
      },
      {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: { name, namespace: "default", labels: { "kubernetes.io/service-name": name } },
        addressType: "IPv4",
        ports: [{ name: "http", port: o.endpointPort ?? 9000 }],
        endpoints: [{ addresses: ["127.0.0.1"] }],
      },
    );
  }
  for (let i = 0; i < o.routes; i++) out.push(syntheticRoute(i, o.services));
  return out;
}
