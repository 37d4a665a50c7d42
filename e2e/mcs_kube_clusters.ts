/**
 * Two clusters of one clusterset on one machine, each with its own real control plane (issue 20,
 * item 7): per cluster an etcd, kube-apiserver, kube-controller-manager, kube-scheduler and a kwok
 * node whose podCIDR lies on the cluster's own CNI bridge (e2e/peers/kwok_cluster.ts), process
 * pods for that node (e2e/pod_runner.ts), and aether as it runs in a cluster: the controller
 * (leader-elected; MCS and the registrar on the shared registry etcd) and the node agent reading
 * the API server (not a config folder), with SPIRE identity, transparent capture through aether's
 * CNI plugin, and its DNS responder on the bridge's gateway address. One registry etcd and one
 * SPIRE (one trust domain) are shared. The host routes between the bridges (flat pod routing).
 * @module
 */
import { join } from "node:path";
import { Logger } from "../lib/log/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { EtcdKv } from "../lib/registry/mod.ts";
import { controllerDefaults, runController } from "../controller/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { createPodNetwork, type PodNetwork } from "./netns.ts";
import { type KwokCluster, startKwokCluster } from "./peers/kwok_cluster.ts";
import { type Etcd, startEtcd } from "./peers/etcd.ts";
import { freePort } from "./peers/proc.ts";
import { type Spire, startSpire } from "./spire.ts";
import { PodRunner } from "./pod_runner.ts";
import { defaultImages } from "./pod_images.ts";
import { gatewayPod } from "./east_west_pod.ts";
import type { EastWestGateway } from "../agent/east_west/mod.ts";
import type { NetPod } from "./netns.ts";

/** The region of both clusters; their MCS cluster ids are `<name>.eu`. */
export const KUBE_REGION = "eu";

/**
 * The cluster DNS address in the pods' resolv.conf (kubelet `--cluster-dns`; nothing listens
 * there: the node agent's capture sends each pod's queries to it to the agent's responder).
 */
export const CLUSTER_DNS = "10.96.0.10";

/** A running aether controller. */
export type Controller = Awaited<ReturnType<typeof runController>>;

/** One cluster. */
export interface KubeMcsCluster {
  name: string;
  net: PodNetwork;
  kwok: KwokCluster;
  client: KubeClient;
  controller: Controller;
  node: NodeAgent;
  runner: PodRunner;
  /** The DNS responder of the cluster's node agent (its pods' queries to CLUSTER_DNS go there). */
  dns: { ip: string; port: number };
  /** POSTs an object to the cluster's API server (throws unless 2xx). */
  create(path: string, body: unknown): Promise<unknown>;
  /** Its east-west gateway (a pod on its bridge), when asked for. */
  gateway?: { pod: NetPod; address: string; runtime: EastWestGateway };
}

/** The two clusters and what they share. */
export interface KubeMcsClusters {
  registry: Etcd;
  spire: Spire;
  a: KubeMcsCluster;
  b: KubeMcsCluster;
  /** Every component's log lines (shown when a test fails). */
  logs: string[];
  close(): Promise<void>;
}

/** Options of {@link startKubeMcsClusters}. */
export interface KubeMcsOptions {
  /** Namespaces made in both clusters, with the ServiceAccounts in each (SPIRE entries too). */
  serviceAccounts: Record<string, string[]>;
  /**
   * Clusters (`a`, `b`) with an east-west gateway: a pod on the cluster's bridge running the
   * gateway, its address given to the cluster's controller, so every endpoint record carries it.
   */
  gateways?: string[];
}

/** What the clusters of one clusterset share, and where each one's teardown is pushed. */
export interface KubeMcsShared {
  /** A folder of the test's own (each cluster gets `<root>/<name>`). */
  root: string;
  logs: string[];
  /** Teardown steps, run in reverse by the caller. */
  stops: (() => Promise<void>)[];
  /** The registry etcd's client URL. */
  registryUrl: string;
  /** The SPIRE whose admin socket the cluster's node agent asks for its pods' SVIDs. */
  spire: Spire;
  serviceAccounts: Record<string, string[]>;
}

/**
 * Starts one cluster `name` of the clusterset (its pod network, API server with a kwok node,
 * aether's controller and node agent, the pod runner), pushing its teardown onto `s.stops`.
 */
export async function startKubeMcsCluster(
  name: string,
  s: KubeMcsShared,
  withGateway = false,
): Promise<KubeMcsCluster> {
  const { root, logs, stops, registryUrl, spire } = s;
  const images = await defaultImages();
  const envoy = await ensurePeer("envoy");
  const dir = join(root, name);
  const log = (component: string) =>
    new Logger(`${name}/${component}`, (l) => logs.push(l), "info");
  const net = await createPodNetwork();
  stops.push(() => net.remove());
  await net.up();
  await Deno.mkdir(dir, { recursive: true });
  const gwPod = withGateway ? await gatewayPod(net, dir) : undefined;
  const kwok = await startKwokCluster(dir, {
    podCidr: net.staticRange,
    nodeName: `node-${name}`,
    namespaces: ["aether-system", ...Object.keys(s.serviceAccounts)],
  });
  stops.push(() => kwok.stop());
  for (const [ns, names] of Object.entries(s.serviceAccounts)) {
    for (const sa of names) {
      await kwok.create(`/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: sa } });
    }
  }
  const client = new KubeClient({ kubeconfig: kwok.kube.kubeconfig });
  stops.push(() => Promise.resolve(client.close()));
  const controller = await runController({
    ...controllerDefaults,
    client,
    identity: `controller-${name}`,
    leaseNamespace: "aether-system",
    transparentCapture: true,
    logger: log("controller"),
    mcs: {
      kv: new EtcdKv({ url: registryUrl, timeoutMs: 5000 }),
      origin: { region: KUBE_REGION, cluster: name },
      ttlSeconds: 10,
      trustDomain: spire.trustDomain,
      ...(gwPod ? { eastWestGateway: gwPod.address } : {}),
    },
  });
  stops.push(() => controller.close());
  const gateway = gwPod && {
    pod: gwPod.pod,
    address: gwPod.address,
    runtime: await gwPod.start(
      new EtcdKv({ url: registryUrl, timeoutMs: 5000 }),
      KUBE_REGION,
      name,
      logs,
    ),
  };
  if (gateway) stops.push(() => gateway.runtime.close());
  const cniSocket = join(dir, "cni.sock");
  const node = await runNode({
    ...nodeDefaults,
    envoy,
    kubeconfig: kwok.kube.kubeconfig,
    nodeName: kwok.nodeName,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: `${net.gateway}:${freePort()}`,
    captureDns: [CLUSTER_DNS],
    stateDir: join(dir, "agent"),
    spireAdminSocket: spire.adminSocket,
    trustDomain: spire.trustDomain,
    capture: true,
    cniSocket,
    registryUrl,
    region: KUBE_REGION,
    cluster: name,
    logger: log("agent"),
  });
  stops.push(() => node.close());
  await node.waitReady(120_000);
  const runner = new PodRunner({
    client,
    nodeName: kwok.nodeName,
    net,
    images,
    cniSocket,
    clusterDns: CLUSTER_DNS,
    logger: log("pods"),
  });
  stops.push(() => runner.stop());
  await runner.start();
  return {
    name,
    net,
    kwok,
    client,
    controller,
    node,
    runner,
    dns: { ip: net.gateway, port: node.dns!.port },
    create: kwok.create,
    ...(gateway ? { gateway } : {}),
  };
}

/** Starts the registry, SPIRE and both clusters; everything torn down on failure. */
export async function startKubeMcsClusters(o: KubeMcsOptions): Promise<KubeMcsClusters> {
  const root = await Deno.makeTempDir({ prefix: "aether-mcs-kube-" });
  const logs: string[] = [];
  const stops: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
    await Deno.remove(root, { recursive: true }).catch(() => {});
  };
  try {
    const registry = await startEtcd(join(root, "registry"));
    stops.push(() => registry.stop());
    const spire = await startSpire();
    stops.push(() => spire.stop());
    for (const [ns, names] of Object.entries(o.serviceAccounts)) {
      for (const sa of names) await spire.registerPod(ns, sa);
    }
    const shared: KubeMcsShared = {
      root,
      logs,
      stops,
      registryUrl: registry.url,
      spire,
      serviceAccounts: o.serviceAccounts,
    };
    const a = await startKubeMcsCluster("a", shared, o.gateways?.includes("a"));
    const b = await startKubeMcsCluster("b", shared, o.gateways?.includes("b"));
    return { registry, spire, a, b, logs, close };
  } catch (e) {
    await close();
    throw e;
  }
}
