/**
 * Identity e2e harness: SPIRE (e2e/spire.ts), pods with routable addresses on a CNI bridge
 * (e2e/netns.ts), echo backends as processes inside pods, Pod objects with service accounts and
 * IPs, and a node agent whose every hop is SPIFFE mTLS.
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import type { SourceObject } from "../lib/source/types.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/run.ts";
import { NETNS_ANNOTATION } from "../agent/node/pods.ts";
import type { NetPod } from "./netns.ts";
import { type Proc, spawn, waitFor } from "./peers/proc.ts";
import type { Spire } from "./spire.ts";
import { ensurePeer } from "../lib/peers/mod.ts";

/** A Pod object for a bridge pod: namespace, service account, IP, node. */
export function netPodObject(
  pod: NetPod,
  namespace: string,
  name: string,
  serviceAccount: string,
  nodeName: string,
): SourceObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace, annotations: { [NETNS_ANNOTATION]: pod.netnsPath } },
    spec: { nodeName, serviceAccountName: serviceAccount },
    status: { phase: "Running", podIP: pod.ip },
  };
}

/** A Service (port 8080 → `targetPort`) with one EndpointSlice over `ips`. */
export function podService(
  name: string,
  namespace: string,
  ips: string[],
  targetPort: number,
  annotations: Record<string, string> = {},
): SourceObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace, annotations, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: { ports: [{ name: "http", port: 8080, targetPort }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "http", port: targetPort }],
      endpoints: ips.map((ip) => ({ addresses: [ip] })),
    },
  ];
}

/** Starts the echo server (`e2e/echo/cli.ts`) inside `pod` on its IP. */
export async function echoInPod(
  pod: NetPod,
  name: string,
  port: number,
  tls?: { cert: string; key: string },
): Promise<Proc> {
  const ip = await ensurePeer("ip");
  const args = ["netns", "exec", pod.netns, Deno.execPath(), "run", "-A", "e2e/echo/cli.ts"];
  args.push("--name", name, "--hostname", pod.ip, "--port", String(port));
  if (tls) args.push("--cert", tls.cert, "--key", tls.key);
  const proc = spawn(`echo-${name}`, ip, args);
  await waitFor(
    `echo ${name} listening`,
    () => Promise.resolve(proc.output().includes("listening") ? true : undefined),
    60_000,
    [proc],
  );
  return proc;
}

/** Starts a node agent on `dir` with SPIRE identity. */
export async function startIdentityNode(
  dir: string,
  nodeName: string,
  spire: Spire,
  logs: string[] = [],
): Promise<NodeAgent> {
  const agent = await runNode({
    ...nodeDefaults,
    config: dir,
    nodeName,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    spireAdminSocket: spire.adminSocket,
    trustDomain: spire.trustDomain,
    logger: new Logger(`agent-${nodeName}`, (l) => logs.push(l), "info"),
  });
  return agent;
}

/** The inline PEM of a node's SDS secret (an SVID: chain + key; a bundle: CA). */
export function secretPem(
  agent: NodeAgent,
  nodeName: string,
  name: string,
): { cert?: string; key?: string; ca?: string } | undefined {
  const s = agent.snapshots.resources(nodeName)?.secrets.find((x) => x.name === name);
  if (!s) return undefined;
  const r = s.resource as {
    tls_certificate?: {
      certificate_chain: { inline_string: string };
      private_key: { inline_string: string };
    };
    validation_context?: { trusted_ca: { inline_string: string } };
  };
  return {
    cert: r.tls_certificate?.certificate_chain.inline_string,
    key: r.tls_certificate?.private_key.inline_string,
    ca: r.validation_context?.trusted_ca.inline_string,
  };
}
