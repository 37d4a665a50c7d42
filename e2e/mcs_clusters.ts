/**
 * Two "clusters" A and B of one clusterset on one machine, without kubelets (issue 20): one real
 * registry etcd and one real SPIRE (one trust domain) shared by both; per cluster a CNI bridge
 * for its pods (the host routes between the bridges: flat pod-CIDR routing), a config folder
 * standing for its API server, and a node agent (`--registry-url … --region eu --cluster <c>`,
 * SPIRE identity, transparent capture, its DNS responder on the bridge's gateway address) with
 * its node-proxy Envoy. Each cluster's registrar is a registry writer publishing what the real
 * registrar's record function makes of the cluster's EndpointSlices and Pods (e2e/mcs_scene.ts) —
 * in this process, or as its own process (e2e/registry_writer_process.ts) to be SIGKILLed.
 * @module
 */
import { join } from "node:path";
import { Logger } from "../lib/log/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import { type NodeAgent, nodeDefaults, runNode } from "../agent/node/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { createPodNetwork, type NetPod, type PodNetwork } from "./netns.ts";
import { type Proc, spawn, waitFor } from "./peers/proc.ts";
import { type Spire, startSpire } from "./spire.ts";
import { type Etcd, startEtcd } from "./peers/etcd.ts";
import { echoInPod } from "./identity_harness.ts";
import { toYaml } from "./harness.ts";
import { NS, registrarRecords, type ScenePod, WEB_TARGET } from "./mcs_scene.ts";

/** The region both clusters are in; cluster ids are `a.eu` and `b.eu`. */
export const REGION = "eu";

/** A pod to start in a cluster: key, service account, and whether it runs web's echo. */
export interface PodSpec {
  key: string;
  serviceAccount: string;
  /** Runs the echo server (named `key`) on the pod's IP at WEB_TARGET. */
  echo?: boolean;
}

/** One cluster of the scene. */
export interface McsCluster {
  /** `a` or `b`. */
  name: string;
  /** MCS cluster id, `<name>.eu`. */
  id: string;
  nodeName: string;
  net: PodNetwork;
  pods: Record<string, ScenePod>;
  /** The echo server processes, by pod key (stop one to fail its pod). */
  echos: Record<string, Proc>;
  dir: string;
  /** Its "API server": written to the config folder by `write`. */
  objects: SourceObject[];
  write(): Promise<void>;
  node: NodeAgent;
  /** The DNS responder the cluster's pods are configured with. */
  dns: { ip: string; port: number };
  /** What its registrar writes for the current objects. */
  records(): Map<string, string>;
  /** Restarts the echo server of pod `key`. */
  restartEcho(key: string): Promise<void>;
}

/** The scene. */
export interface McsClusters {
  etcd: Etcd;
  kv: EtcdKv;
  spire: Spire;
  a: McsCluster;
  b: McsCluster;
  /** A registrar for `cluster` in this process (graceful `stop` does not revoke its lease). */
  writer(cluster: McsCluster, ttlSeconds: number): OriginWriter;
  /**
   * A registrar for `cluster` as its own process publishing `records`; resolves once it has
   * published (its lease is kept alive until it is killed).
   */
  writerProcess(
    cluster: McsCluster,
    ttlSeconds: number,
    records: Map<string, string>,
  ): Promise<Proc>;
  logs: string[];
  close(): Promise<void>;
}

/** Options of {@link startMcsClusters}. */
export interface McsClustersOptions {
  pods: { a: PodSpec[]; b: PodSpec[] };
  /** The objects of each cluster's "API server" besides its Pods. */
  objects(cluster: "a" | "b", pods: Record<string, ScenePod>, nodeName: string): SourceObject[];
}

const quiet = new Logger("registry", () => {}, "error");

/** Starts etcd, SPIRE, both clusters' pods and node agents; everything torn down on failure. */
export async function startMcsClusters(o: McsClustersOptions): Promise<McsClusters> {
  const root = await Deno.makeTempDir({ prefix: "aether-mcs-" });
  const logs: string[] = [];
  const procs: Proc[] = [];
  const nets: PodNetwork[] = [];
  const nodes: NodeAgent[] = [];
  const writers: OriginWriter[] = [];
  let etcd: Etcd | undefined;
  let spire: Spire | undefined;
  const close = async () => {
    for (const w of writers) await w.stop().catch(() => {});
    for (const n of nodes) await n.close().catch(() => {});
    for (const p of [...procs].reverse()) await p.stop();
    for (const n of nets) await n.remove();
    await spire?.stop();
    await etcd?.stop();
    await Deno.remove(root, { recursive: true }).catch(() => {});
  };
  try {
    etcd = await startEtcd(join(root, "registry"));
    const kv = new EtcdKv({ url: etcd.url, timeoutMs: 5000 });
    spire = await startSpire();
    const sp = spire;
    const registered = new Set<string>();
    const start = async (name: "a" | "b", specs: PodSpec[]): Promise<McsCluster> => {
      const nodeName = `node-${name}`;
      const net = await createPodNetwork();
      nets.push(net);
      const ids = new Set<string>();
      for (const s of specs) {
        // One trust domain: a service account both clusters have is one SPIRE entry.
        const id = `spiffe://${sp.trustDomain}/ns/${NS}/sa/${s.serviceAccount}`;
        if (!registered.has(id)) registered.add(await sp.registerPod(NS, s.serviceAccount));
        ids.add(id);
      }
      const pods: Record<string, ScenePod> = {};
      const echos: Record<string, Proc> = {};
      for (const s of specs) {
        const pod: NetPod = await net.addPod(`aether-mcs-${name}${s.key}`.slice(0, 20));
        pods[s.key] = { pod, name: s.key, serviceAccount: s.serviceAccount };
      }
      const startEcho = async (key: string) => {
        const p = await echoInPod(pods[key].pod, key, WEB_TARGET);
        procs.push(p);
        echos[key] = p;
      };
      for (const s of specs) if (s.echo) await startEcho(s.key);
      const dir = join(root, name);
      await Deno.mkdir(dir);
      const objects = o.objects(name, pods, nodeName);
      const write = () => Deno.writeTextFile(join(dir, "mesh.yaml"), toYaml(...objects));
      await write();
      const node = await runNode({
        ...nodeDefaults,
        envoy: await ensurePeer("envoy"),
        config: dir,
        nodeName,
        adminAddress: "127.0.0.1:0",
        xdsAddress: "127.0.0.1:0",
        dnsAddress: `${net.gateway}:0`,
        spireAdminSocket: sp.adminSocket,
        trustDomain: sp.trustDomain,
        capture: true,
        registryUrl: etcd!.url,
        region: REGION,
        cluster: name,
        logger: new Logger(`agent-${name}`, (l) => logs.push(l), "info"),
      });
      nodes.push(node);
      await waitFor(`SVIDs on ${nodeName}`, () => {
        const names = node.snapshots.resources(nodeName)?.secrets.map((s) => s.name) ?? [];
        return Promise.resolve([...ids].every((w) => names.includes(w)) ? true : undefined);
      }, 120_000);
      await node.waitReady(120_000);
      const id = `${name}.${REGION}`;
      return {
        name,
        id,
        nodeName,
        net,
        pods,
        echos,
        dir,
        objects,
        write,
        node,
        dns: { ip: net.gateway, port: node.dns!.port },
        records: () => registrarRecords(id, objects, sp.trustDomain),
        restartEcho: async (key) => {
          await echos[key]?.stop();
          await startEcho(key);
        },
      };
    };
    const a = await start("a", o.pods.a);
    const b = await start("b", o.pods.b);
    const e = etcd;
    return {
      etcd: e,
      kv,
      spire: sp,
      a,
      b,
      logs,
      writer: (cluster, ttlSeconds) => {
        const w = new OriginWriter({
          kv,
          origin: { region: REGION, cluster: cluster.name },
          writer: `registrar-${cluster.name}`,
          ttlSeconds,
          logger: quiet,
        });
        writers.push(w);
        return w;
      },
      writerProcess: async (cluster, ttlSeconds, records) => {
        const file = join(root, `records-${cluster.name}-${crypto.randomUUID().slice(0, 6)}.json`);
        await Deno.writeTextFile(file, JSON.stringify(Object.fromEntries(records)));
        const cmd = [Deno.execPath(), "run", "-A", "e2e/registry_writer_process.ts", e.url, REGION]
          .concat([cluster.name, String(ttlSeconds)]).map((s) => `'${s}'`).join(" ");
        const p = spawn(`registrar-${cluster.name}`, "/bin/sh", ["-c", `exec ${cmd} < '${file}'`]);
        procs.push(p);
        await waitFor(
          `registrar ${cluster.name} published`,
          () => Promise.resolve(p.output().includes("published") ? true : undefined),
          60_000,
          [p],
        );
        return p;
      },
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
