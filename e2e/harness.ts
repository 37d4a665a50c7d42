/**
 * End-to-end harness: a standalone agent with a real Envoy 1.40 child, fed from an in-memory
 * source (or a config folder), plus builders for the Gateway API objects tests use (those of
 * testbed/fixtures/objects.ts, and serviceFor for an echo backend).
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { runStandalone, type StandaloneAgent, standaloneDefaults } from "../agent/edge/mod.ts";
import type { StandaloneOptions } from "../agent/edge/mod.ts";
import { type EchoServer, startEcho } from "./echo/server.ts";
import { freePort, freePorts } from "./http_client.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";

import { gateway, gatewayClass, httpRoute, namespace } from "../testbed/fixtures/objects.ts";

export {
  gateway,
  gatewayClass,
  httpRoute,
  namespace,
  toYaml,
} from "../testbed/fixtures/objects.ts";

/** A running edge under test. */
export interface Edge {
  agent: StandaloneAgent;
  source: MemorySource;
  /** Log lines the agent wrote (JSON strings). */
  logs: string[];
  /** Applies objects and waits until Envoy has ACKed the resulting config. */
  apply(...objects: SourceObject[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts agent + Envoy on an in-memory source holding `objects` (loopback ports 0, a random node
 * id, Envoy from the peer cache), with `options` over those defaults.
 */
export async function startEdge(
  objects: SourceObject[] = [],
  options: Partial<StandaloneOptions> = {},
): Promise<Edge> {
  const logs: string[] = [];
  const source = new MemorySource(objects);
  const agent = await runStandalone({
    ...standaloneDefaults,
    envoy: await ensurePeer("envoy"),
    source,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "127.0.0.1:0",
    nodeId: `e2e-${crypto.randomUUID().slice(0, 8)}`,
    logger: new Logger("agent", (l) => logs.push(l), "info"),
    ...options,
  });
  await agent.waitReady(60000);
  return {
    agent,
    source,
    logs,
    apply: async (...objs) => {
      source.apply(...objs);
      await agent.waitReady(60000);
    },
    close: () => agent.close(),
  };
}

/** Starts echo backends named by `names`, each on its own free port of 127.0.0.1. */
export async function startEchos(...names: string[]): Promise<Record<string, EchoServer>> {
  const out: Record<string, EchoServer> = {};
  for (const n of names) out[n] = await startEcho(n, "127.0.0.1", 0);
  return out;
}

/** Closes every echo backend. */
export async function closeEchos(
  echos: Record<string, { close(): Promise<void> }>,
): Promise<void> {
  for (const e of Object.values(echos)) await e.close();
}

/** A Service with one port `port` → the echo server's port, plus its EndpointSlice. */
export function serviceFor(
  name: string,
  echo: Pick<EchoServer, "hostname" | "port">,
  opts: { namespace?: string; port?: number; appProtocol?: string; clusterIP?: string } = {},
): SourceObject[] {
  const namespace = opts.namespace ?? "default";
  const port = opts.port ?? 8080;
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: {
        ...(opts.clusterIP ? { clusterIP: opts.clusterIP } : {}),
        ports: [{ name: "http", port, targetPort: echo.port, appProtocol: opts.appProtocol }],
      },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "http", port: echo.port }],
      endpoints: [{ addresses: [echo.hostname], conditions: { ready: true } }],
    },
  ];
}

/**
 * One Gateway `gw` with an HTTP listener on `port` and an HTTPRoute for `app.example.com` to the
 * Service `app` (port 8080) of `echo`: the smallest edge a process test runs.
 */
export function appGateway(port: number, echo: Pick<EchoServer, "hostname" | "port">) {
  return [
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...serviceFor("app", echo),
    httpRoute("app", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["app.example.com"],
      rules: [{ backendRefs: [{ name: "app", port: 8080 }] }],
    }),
  ];
}

/**
 * The edge side of the same-named-Services tests (one Service `web` per namespace): Gateway `gw`
 * in default with an HTTP listener on `port` admitting routes from every namespace, and per
 * namespace `ns` an HTTPRoute there for `<ns>.example.com` to its own `web:8080`.
 */
export function sameNameRoutes(port: number, namespaces: readonly string[]): SourceObject[] {
  return [
    gatewayClass(),
    namespace("default"),
    ...namespaces.map((ns) => namespace(ns)),
    gateway("gw", [{
      name: "http",
      protocol: "HTTP",
      port,
      allowedRoutes: { namespaces: { from: "All" } },
    }]),
    ...namespaces.map((ns) =>
      httpRoute(ns, {
        parentRefs: [{ name: "gw", namespace: "default" }],
        hostnames: [`${ns}.example.com`],
        rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
      }, ns)
    ),
  ];
}

/** Polls `check` every 25 ms until it holds; throws naming `what` after `timeoutMs`. */
export async function waitFor(
  what: string,
  check: () => Promise<boolean> | boolean,
  timeoutMs = 60000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A free port for a Gateway listener. */
export { freePort, freePorts };
