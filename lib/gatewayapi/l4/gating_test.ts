/**
 * The seed's gating: a route kind left out of the served kinds (its CRD not installed) is not
 * advertised in supportedFeatures, its listener protocol is UnsupportedProtocol, and its routes
 * are not served; with every kind known (file mode) the same objects are served.
 */
import assert from "node:assert/strict";
import { resolve } from "../resolve.ts";
import { ROUTE_KINDS } from "../routes/registry.ts";
import type { KubeObject } from "../types.ts";
import { gateway, gatewayClass } from "../../../testbed/fixtures/objects.ts";

const objects: KubeObject[] = [
  gatewayClass(),
  gateway("gw", [
    { name: "tcp", port: 7000, protocol: "TCP" },
    { name: "udp", port: 7001, protocol: "UDP" },
  ]),
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "db", namespace: "default" },
    spec: { ports: [{ name: "db", port: 5432 }] },
  },
  {
    apiVersion: "gateway.networking.k8s.io/v1alpha2",
    kind: "TCPRoute",
    metadata: { name: "db", namespace: "default" },
    spec: { parentRefs: [{ name: "gw" }], rules: [{ backendRefs: [{ name: "db", port: 5432 }] }] },
  },
];

type Listener = { name: string; conditions: { type: string; status: string; reason: string }[] };

function summary(kinds = ROUTE_KINDS) {
  const { ir, statuses } = resolve(objects, { routeKinds: kinds });
  const gc = statuses.find((s) => s.kind === "GatewayClass")!.status as {
    supportedFeatures: { name: string }[];
  };
  const gw = statuses.find((s) => s.kind === "Gateway")!.status as { listeners: Listener[] };
  return {
    features: gc.supportedFeatures.map((f) => f.name).filter((f) => /^(TCP|UDP|TLS)Route/.test(f)),
    accepted: gw.listeners.map((l) => {
      const c = l.conditions.find((c) => c.type === "Accepted")!;
      return `${l.name}=${c.status}/${c.reason}`;
    }),
    listeners: ir.listeners.map((l) => `${l.name} ${l.protocol}`),
    routeStatus: statuses.some((s) => s.kind === "TCPRoute"),
  };
}

Deno.test("gating: every L4 kind known (file mode) serves TCP and UDP listeners", () => {
  assert.deepEqual(summary(), {
    features: ["TCPRoute", "TLSRoute", "TLSRouteModeMixed", "TLSRouteModeTerminate", "UDPRoute"],
    accepted: ["tcp=True/Accepted", "udp=True/Accepted"],
    listeners: ["127.0.0.1:7000 TCP"],
    routeStatus: true,
  });
});

Deno.test("gating: without the TCPRoute CRD, TCP listeners and TCPRoutes are not served", () => {
  const kinds = ROUTE_KINDS.filter((k) => k.kind !== "TCPRoute");
  assert.deepEqual(summary(kinds), {
    features: ["TLSRoute", "TLSRouteModeMixed", "TLSRouteModeTerminate", "UDPRoute"],
    accepted: ["tcp=False/UnsupportedProtocol", "udp=True/Accepted"],
    listeners: [],
    routeStatus: false,
  });
});
