/**
 * Identity e2e harness: SPIRE (e2e/spire.ts), pods with routable addresses on a CNI bridge
 * (e2e/netns.ts), echo backends as processes inside pods, Pod objects with service accounts and
 * IPs, and a node agent whose every hop is SPIFFE mTLS.
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { type NodeAgent, type NodeAgentOptions, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { join } from "node:path";
import { createPodNetwork, type NetPod, type PodNetwork } from "./netns.ts";
import { type Proc, spawn, waitFor } from "./peers/proc.ts";
import { type Spire, startSpire } from "./spire.ts";
import { toYaml } from "./harness.ts";
import { podObject } from "./mesh_harness.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { runStandalone, standaloneDefaults } from "../agent/edge/mod.ts";
import { type EnvoyProcess, startEnvoy } from "../agent/xds/server/_test_utils.ts";

/** The bootstrap as an agent before capabilities wrote it: no extension, no metadata. */
export function olderBootstrap(b: Record<string, unknown>): Record<string, unknown> {
  const { bootstrap_extensions: _e, node, ...rest } = b;
  const { metadata: _m, ...n } = node as Record<string, unknown>;
  return { ...rest, node: n };
}

/**
 * Starts a real Envoy as the node agent's node proxy (`node-1`, delta ADS), from the current
 * bootstrap or, with `older`, from the bootstrap of an agent before capabilities.
 */
export function startNodeEnvoy(node: NodeAgent, older: boolean): Promise<EnvoyProcess> {
  return startEnvoy({
    nodeId: "node-1",
    cluster: "aether-node",
    xdsPort: node.xdsPort,
    delta: true,
    ...(older ? { editBootstrap: olderBootstrap } : {}),
  });
}

/** A Pod object for a bridge pod: namespace, service account, IP, node. */
export function netPodObject(
  pod: NetPod,
  namespace: string,
  name: string,
  serviceAccount: string,
  nodeName: string,
): SourceObject {
  return podObject(pod, namespace, name, nodeName, { serviceAccount, ip: pod.ip });
}

/**
 * A Service (port 8080 → `targetPort`) with one EndpointSlice over `ips`; `created` is its
 * creationTimestamp (of two same-named Services the older owns the mesh name).
 */
export function podService(
  name: string,
  namespace: string,
  ips: string[],
  targetPort: number,
  annotations: Record<string, string> = {},
  created = "2026-01-01T00:00:00Z",
): SourceObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace, annotations, creationTimestamp: created },
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

/** Starts a node agent on `dir` with SPIRE identity (`overrides` over the test defaults). */
export async function startIdentityNode(
  dir: string,
  nodeName: string,
  spire: Spire,
  logs: string[] = [],
  overrides: Partial<NodeAgentOptions> = {},
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
    ...overrides,
  });
  return agent;
}

/**
 * Starts an edge (standalone agent) on `objects` whose own SVID comes from SPIRE's Workload API,
 * so it dials pods over mTLS as a mesh client.
 */
export function startIdentityEdge(
  objects: SourceObject[],
  spire: Spire,
  logs: string[] = [],
  adminAddress = "127.0.0.1:0",
): ReturnType<typeof runStandalone> {
  return runStandalone({
    ...standaloneDefaults,
    source: new MemorySource(objects),
    adminAddress,
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    nodeId: `edge-${crypto.randomUUID().slice(0, 8)}`,
    spireSocket: spire.socket,
    trustDomain: spire.trustDomain,
    logger: new Logger("edge", (l) => logs.push(l), "info"),
  });
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

/** A pod of an identity rig: its Pod object, and an echo server inside it when `echo` is set. */
export interface RigPod {
  /** Key in {@link IdentityRig.pods}; the pod's netns is `aether-<key>`. */
  key: string;
  namespace: string;
  name: string;
  serviceAccount: string;
  echo?: { name: string; port: number };
  /** The node it runs on (default `node-1`); every node named gets its own agent and Envoy. */
  node?: string;
  /** TTL of this pod's SPIRE entry (default: the rig's). */
  svidTtlSeconds?: number;
}

/** SPIRE, pods on a CNI bridge (each with its SVID registered) and identity node agents. */
export interface IdentityRig {
  spire: Spire;
  net: PodNetwork;
  pods: Record<string, NetPod>;
  /** The agent of `node-1`. */
  node: NodeAgent;
  nodeName: string;
  /** Every node's agent (each with its Envoy), by node name. */
  nodes: Record<string, NodeAgent>;
  dir: string;
  logs: string[];
  /** Objects written to the config folder; `write` rewrites the folder with them. */
  objects: SourceObject[];
  write(): Promise<void>;
  procs: Proc[];
  close(): Promise<void>;
}

/** Options of {@link startIdentityRig}. */
export interface IdentityRigOptions {
  pods: RigPod[];
  /** The Services (and EndpointSlices) over the pods, by key. */
  services(pods: Record<string, NetPod>): SourceObject[];
  /** TTL of the pods' SPIRE entries (default: SPIRE's). */
  svidTtlSeconds?: number;
  /** Over the node agent's test options (e.g. `envoy: "none"` with `externalEnvoy`). */
  node?: Partial<NodeAgentOptions>;
  /**
   * Starts an Envoy the agent does not start (as the chart's node-proxy DaemonSet has), once the
   * agent listens; it is stopped on close.
   */
  externalEnvoy?: (node: NodeAgent) => Promise<{ stop(): Promise<void> }>;
}

/**
 * Starts SPIRE, registers every pod's identity, starts the pods (and their echo servers) and a
 * node agent per node (`node-1` unless a pod names another); resolves once every node serves its
 * pods' SVIDs and its Envoy is ready. Everything is torn down on failure and by `close`.
 */
export async function startIdentityRig(o: IdentityRigOptions): Promise<IdentityRig> {
  const spire = await startSpire();
  const net = await createPodNetwork();
  const procs: Proc[] = [];
  const dir = await Deno.makeTempDir({ prefix: "aether-identity-" });
  const nodeName = "node-1";
  const nodeOf = (p: RigPod) => p.node ?? nodeName;
  const logs: string[] = [];
  const nodes: Record<string, NodeAgent> = {};
  let external: { stop(): Promise<void> } | undefined;
  const close = async () => {
    await external?.stop();
    for (const n of Object.values(nodes)) await n.close();
    for (const p of [...procs].reverse()) await p.stop();
    await net.remove();
    await spire.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const ids = new Map<string, Set<string>>();
    for (const p of o.pods) {
      const id = await spire.registerPod(
        p.namespace,
        p.serviceAccount,
        p.svidTtlSeconds ?? o.svidTtlSeconds,
      );
      ids.set(nodeOf(p), new Set([...ids.get(nodeOf(p)) ?? [], id]));
    }
    const pods: Record<string, NetPod> = {};
    for (const p of o.pods) pods[p.key] = await net.addPod(`aether-${p.key}`);
    for (const p of o.pods) {
      if (p.echo) procs.push(await echoInPod(pods[p.key], p.echo.name, p.echo.port));
    }
    const objects = [
      ...o.pods.map((p) =>
        netPodObject(pods[p.key], p.namespace, p.name, p.serviceAccount, nodeOf(p))
      ),
      ...o.services(pods),
    ];
    const write = () => Deno.writeTextFile(join(dir, "mesh.yaml"), toYaml(...objects));
    await write();
    for (const name of [nodeName, ...[...ids.keys()].filter((n) => n !== nodeName).sort()]) {
      const first = name === nodeName;
      const n = await startIdentityNode(dir, name, spire, logs, first ? o.node : {});
      nodes[name] = n;
      if (first && o.externalEnvoy) external = await o.externalEnvoy(n);
      const want = [...ids.get(name) ?? []];
      await waitFor(`SVIDs of ${want.join(", ")} on ${name}`, () => {
        const names = n.snapshots.resources(name)?.secrets.map((s) => s.name) ?? [];
        return Promise.resolve(want.every((w) => names.includes(w)) ? true : undefined);
      }, 90_000);
      await n.waitReady(60_000);
    }
    const node = nodes[nodeName];
    return { spire, net, pods, node, nodeName, nodes, dir, logs, objects, write, procs, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/** A small identity mesh: pod a/client calls service b (pod b/b, echo on 9090) on one node. */
export interface IdentityMesh extends IdentityRig {
  a: NetPod;
  b: NetPod;
}

/** Options of {@link startIdentityMesh}. */
export type IdentityMeshOptions = Pick<IdentityRigOptions, "node" | "externalEnvoy">;

/** Starts SPIRE (with `svidTtlSeconds` on the pod entries), the pods and the node agent. */
export async function startIdentityMesh(
  svidTtlSeconds?: number,
  o: IdentityMeshOptions = {},
): Promise<IdentityMesh> {
  const rig = await startIdentityRig({
    ...o,
    svidTtlSeconds,
    pods: [
      { key: "a", namespace: "a", name: "client-0", serviceAccount: "client" },
      {
        key: "b",
        namespace: "b",
        name: "b-0",
        serviceAccount: "b",
        echo: { name: "b", port: 9090 },
      },
    ],
    services: (pods) => podService("b", "b", [pods.b.ip], 9090),
  });
  return { ...rig, a: rig.pods.a, b: rig.pods.b };
}

/** Result of {@link loadFrom}. */
export interface LoadResult {
  sent: number;
  ok: number;
  failed: number;
  statuses: Record<string, number>;
  errors: string[];
  /** The first failures with their time (ms since the epoch; e2e/load_client.ts gives them). */
  failures?: { at: number; what: string }[];
  rate: number;
  p50Ms: number;
  p99Ms: number;
}

/** Starts `e2e/load_client.ts` inside `pod`; resolves with its summary when it ends. */
export async function loadFrom(
  pod: NetPod,
  host: string,
  rate: number,
  seconds: number,
  workers = 8,
): Promise<LoadResult> {
  const ip = await ensurePeer("ip");
  const out = await new Deno.Command(ip, {
    args: [
      "netns",
      "exec",
      pod.netns,
      Deno.execPath(),
      "run",
      "-A",
      "e2e/load_client.ts",
      "--host",
      host,
      "--rate",
      String(rate),
      "--seconds",
      String(seconds),
      "--workers",
      String(workers),
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`load client failed: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(text.split("\n").pop()!);
}
