/**
 * Mesh objects for the GAMMA push benchmarks (bench/mesh_push.ts, bench/xds_fanout.ts) and the
 * node translator's incremental test: per
 * service a Service, its EndpointSlice and two producer HTTPRoutes; edits change one route's
 * header value or one slice's endpoint address.
 * @module
 */
import type { KubeObject } from "../gatewayapi/types.ts";

/** One change: a route header value or an endpoint address of one service. */
export interface Edit {
  route?: number;
  routeVersion?: number;
  endpoint?: number;
  endpointVersion?: number;
}

/** The objects of service `i` (its Service, EndpointSlice and two routes), with `edit` applied. */
export function serviceObjects(i: number, edit: Edit): KubeObject[] {
  const out: KubeObject[] = [];
  const name = `svc-${i}`;
  const epHost = edit.endpoint === i
    ? `127.0.1.${(edit.endpointVersion ?? 0) % 250 + 1}`
    : "127.0.0.1";
  out.push(
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "mesh" },
      spec: { ports: [{ name: "http", port: 8080, targetPort: 9000 }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace: "mesh", labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "http", port: 9000 }],
      endpoints: [{ addresses: [epHost] }],
    },
  );
  for (let r = 0; r < 2; r++) {
    const v = edit.route === i && r === 0 ? edit.routeVersion ?? 0 : 0;
    out.push({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: {
        name: `${name}-r${r}`,
        namespace: "mesh",
        generation: 1,
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      spec: {
        parentRefs: [{ group: "", kind: "Service", name, port: 8080 }],
        rules: [{
          matches: [{ path: { type: "PathPrefix", value: `/r${r}` } }],
          filters: [{
            type: "RequestHeaderModifier",
            requestHeaderModifier: { set: [{ name: "x-v", value: String(v) }] },
          }],
          backendRefs: [{ name, port: 8080 }],
        }],
      },
    });
  }
  return out;
}
