/**
 * Mesh (GAMMA) e2e harness: node agents with real Envoys reading one config folder, pods as
 * network namespaces, and a client that runs inside a pod.
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { NETNS_ANNOTATION } from "../lib/gatewayapi/mod.ts";
import { createPod, type TestPod } from "./netns.ts";
import type { EchoServer } from "./echo/server.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";

/** Starts a node agent with its Envoy on the config folder `dir`. */
export async function startNode(
  dir: string,
  nodeName: string,
  logs: string[] = [],
): Promise<NodeAgent> {
  const agent = await runNode({
    ...nodeDefaults,
    envoy: await ensurePeer("envoy"),
    config: dir,
    nodeName,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    logger: new Logger(`agent-${nodeName}`, (l) => logs.push(l), "info"),
  });
  await agent.waitReady(60000);
  return agent;
}

/** A running Pod object on `nodeName` whose netns is the test pod's (its service account, IP). */
export function podObject(
  pod: TestPod,
  namespace: string,
  name: string,
  nodeName: string,
  o: { serviceAccount?: string; ip?: string } = {},
): SourceObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, annotations: { [NETNS_ANNOTATION]: pod.netnsPath } },
    spec: { nodeName, ...(o.serviceAccount ? { serviceAccountName: o.serviceAccount } : {}) },
    status: { phase: "Running", ...(o.ip ? { podIP: o.ip } : {}) },
  };
}

/** A mesh Service (with a cluster IP) in front of an echo server, and its EndpointSlice. */
export function meshService(
  name: string,
  namespace: string,
  echo: { hostname: string; port: number },
  opts: {
    clusterIP?: string;
    port?: number;
    appProtocol?: string;
  } = {},
): SourceObject[] {
  const port = opts.port ?? 8080;
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        ...(opts.clusterIP ? { clusterIP: opts.clusterIP } : {}),
        ports: [{
          name: "http",
          port,
          targetPort: echo.port,
          ...(opts.appProtocol ? { appProtocol: opts.appProtocol } : {}),
        }],
      },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "http", port: echo.port }],
      endpoints: [{ addresses: [echo.hostname] }],
    },
  ];
}

/** The result of `e2e/mesh_client.ts` run inside a pod. */
export interface ClientResult {
  counts: Record<string, number>;
  first: {
    status: number;
    headers: Record<string, string>;
    body: string;
    json?: Record<string, unknown>;
  };
}

/** Runs the HTTP client inside `pod` against the node proxy's egress listener. */
export async function curlFrom(pod: TestPod, host: string, opts: {
  path?: string;
  method?: string;
  count?: number;
  headers?: Record<string, string>;
} = {}): Promise<ClientResult> {
  const args = [
    "run",
    "-A",
    "e2e/mesh_client.ts",
    "--host",
    host,
    "--path",
    opts.path ?? "/",
    "--method",
    opts.method ?? "GET",
    "--count",
    String(opts.count ?? 1),
  ];
  for (const [k, v] of Object.entries(opts.headers ?? {})) args.push("--header", `${k}=${v}`);
  const out = await pod.exec(Deno.execPath(), args);
  return JSON.parse(out.trim().split("\n").pop()!);
}

/** Backend name of a single-request result, or `HTTP <status>`. */
export const answer = (r: ClientResult) => Object.keys(r.counts)[0];

export { createPod, type EchoServer, type TestPod };
export { toYaml } from "./harness.ts";
