/**
 * The capture tests' scenario (namespace "mesh", pods v1, v2 and cold from the rig): VIP services
 * with an appProtocol (http, grpc, tcp) or none (sniffed), producer and consumer routes, VIP-less
 * split targets, and what the client pods' rules redirect. Endpoints carry the pods' identities
 * when the rig has them. Not part of the agent.
 * @module
 */
import type { MeshIR } from "../../lib/ir/mod.ts";
import { type BackendPod, type RigPods, VIP6_PREFIX } from "./_capture_test_utils.ts";

/** The mesh domain of the scenario. */
export const D = "aether.internal";

/** The scenario's VIPs (only ever reached through the client pods' rules). */
export const VIP = {
  echo: "10.96.70.10",
  "echo-v1": "10.96.70.11",
  "echo-v2": "10.96.70.12",
  grpc: "10.96.70.13",
  sniff: "10.96.70.14",
  "sniff-grpc": "10.96.70.20",
  "sniff-tcp": "10.96.70.15",
  tcp: "10.96.70.16",
  greet: "10.96.70.17",
  cold: "10.96.70.18",
  "cold-tcp": "10.96.70.19",
} as const;

/** echo-v1's second (IPv6) VIP: dual-stack capture. */
export const VIP6_ECHO_V1 = `${VIP6_PREFIX}::11`;

type Route = MeshIR["services"][number]["ports"][number]["producerRoutes"][number];

/** A route on every path (or `prefix`) to weighted backends, optionally setting `x-route`. */
export function routeTo(
  name: string,
  backends: [string, number][],
  o: { prefix?: string; mark?: string } = {},
): Route {
  return {
    name,
    match: { path: { type: "PathPrefix", value: o.prefix ?? "/" }, headers: [], queryParams: [] },
    action: {
      kind: "forward",
      backends: backends.map(([svc, weight]) => ({ cluster: svc, weight })),
      mirrors: [],
    },
    ...(o.mark
      ? { responseHeaders: { set: [{ name: "x-route", value: o.mark }], add: [], remove: [] } }
      : {}),
  };
}

interface ScenarioService {
  name: string;
  port: number;
  appProtocol?: string;
  /** Backend pod and its probe port. */
  to: [string, number][];
  http2?: boolean;
  routes?: Route[];
  consumer?: Record<string, Route[]>;
}

/**
 * The capture scenario's mesh over the rig's pods (namespace "mesh"): VIP services with their
 * appProtocol and routes, plus VIP-less split targets. Endpoints carry the pods' identities.
 */
export function scenarioMesh(pods: RigPods): MeshIR {
  const c = (n: string) => `${n}.${D}`;
  const list = ([
    {
      name: "echo",
      port: 80,
      appProtocol: "http",
      to: [["v1", 8080], ["v2", 8080]],
      routes: [
        routeTo("HTTPRoute/mesh/echo/rule/0", [[c("echo-v2"), 1]], { prefix: "/v2" }),
        routeTo("HTTPRoute/mesh/echo/rule/1", [[c("echo-v1"), 1]]),
      ],
      consumer: { a: [routeTo("HTTPRoute/a/echo/rule/0", [[c("echo-v2"), 1]])] },
    },
    { name: "echo-v1", port: 80, appProtocol: "http", to: [["v1", 8080]] },
    {
      name: "echo-v2",
      port: 80,
      appProtocol: "http",
      to: [["v2", 8080]],
      routes: [routeTo("HTTPRoute/mesh/echo-v2/rule/0", [[c("echo-v2"), 1]], { mark: "echo-v2" })],
    },
    {
      name: "grpc",
      port: 7070,
      appProtocol: "grpc",
      http2: true,
      to: [["v1", 7070], ["v2", 7070]],
      routes: [routeTo("GRPCRoute/mesh/grpc/rule/0", [[c("grpc-v1"), 50], [c("grpc-v2"), 50]])],
    },
    { name: "grpc-v1", port: 7070, http2: true, to: [["v1", 7070]] },
    { name: "grpc-v2", port: 7070, http2: true, to: [["v2", 7070]] },
    {
      name: "sniff",
      port: 8000,
      to: [["v1", 8080], ["v2", 8080]],
      routes: [routeTo("HTTPRoute/mesh/sniff/rule/0", [[c("sniff-v1"), 50], [c("sniff-v2"), 50]])],
    },
    {
      name: "sniff-grpc",
      port: 7071,
      http2: true,
      to: [["v1", 7070], ["v2", 7070]],
      routes: [
        routeTo("GRPCRoute/mesh/sniff-grpc/rule/0", [[c("grpc-v1"), 50], [c("grpc-v2"), 50]]),
      ],
    },
    { name: "sniff-v1", port: 8000, to: [["v1", 8080]] },
    { name: "sniff-v2", port: 8000, to: [["v2", 8080]] },
    { name: "sniff-tcp", port: 7000, to: [["v1", 6000]] },
    { name: "tcp", port: 6000, appProtocol: "tcp", to: [["v1", 6000]] },
    { name: "greet", port: 6001, appProtocol: "tcp", to: [["v1", 6001]] },
    {
      name: "cold",
      port: 80,
      appProtocol: "http",
      to: [["cold", 8080]],
      routes: [routeTo("HTTPRoute/mesh/cold/rule/0", [[c("cold"), 1]], { mark: "cold" })],
    },
    { name: "cold-tcp", port: 6000, appProtocol: "tcp", to: [["cold", 6000]] },
  ] as ScenarioService[]).sort((a, b) => c(a.name) < c(b.name) ? -1 : 1);
  const services = list.map((s) => ({
    authority: c(s.name),
    namespace: "mesh",
    name: s.name,
    vips: [
      ...(s.name in VIP ? [VIP[s.name as keyof typeof VIP]] : []),
      ...(s.name === "echo-v1" ? [VIP6_ECHO_V1] : []),
    ],
    ports: [{
      port: s.port,
      ...(s.appProtocol ? { appProtocol: s.appProtocol } : {}),
      cluster: c(s.name),
      domains: [c(s.name), `${c(s.name)}:${s.port}`],
      producerRoutes: s.routes ?? [],
      consumerRoutes: s.consumer ?? {},
    }],
  }));
  const clusters = list.map((s) => {
    const ids = s.to.map(([pod]) => pods.ids[pod]).filter((id) => id !== undefined);
    return {
      name: c(s.name),
      service: `mesh/${s.name}`,
      port: s.port,
      protocol: s.http2 ? "http2" as const : "http1" as const,
      endpoints: s.to.map(([pod, port]) => ({
        address: pods.ips[pod],
        port,
        ...(pods.ids[pod] ? { identity: pods.ids[pod] } : {}),
      })),
      ...(ids.length ? { identities: [...new Set(ids)].sort() } : {}),
    };
  });
  return { services, clusters };
}

/** The scenario's backend pods. */
export const SCENARIO_BACKENDS: BackendPod[] = [
  { name: "v1", namespace: "mesh", serviceAccount: "v1" },
  { name: "v2", namespace: "mesh", serviceAccount: "v2" },
  { name: "cold", namespace: "mesh", serviceAccount: "cold" },
];

/** What the client pods redirect: every VIP:port of the scenario, and v2's pod IP:8080. */
export function scenarioRedirect(pods: RigPods): [string, number][] {
  const mesh = scenarioMesh(pods);
  const pairs: [string, number][] = mesh.services.flatMap((s) =>
    s.vips.map((v): [string, number] => [v, s.ports[0].port])
  );
  return [...pairs, [pods.ips.v2, 8080]];
}
