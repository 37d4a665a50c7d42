/**
 * Test rig for transparent capture on real Envoy: pods on a CNI bridge (e2e/netns.ts) — two
 * client pods (Kubernetes namespaces "a" and "b", service account "client") and backend pods
 * running `_capture_probe_test_utils.ts serve` on their IPs — nftables rules the rig writes
 * itself in each client pod (`ip daddr . tcp dport { … } redirect to :15001`, the shape of the
 * capture rules),
 * the node role's control plane (NodeSnapshots with `capture` → snapshot cache → XdsServer, delta
 * ADS, onDemand) and one Envoy whose capture listeners are bound in the client pods before the
 * rig is returned. With `spire`, every pod's identity comes from real SPIRE (NodeIdentities →
 * SDS) and every hop is SPIFFE mTLS. close() stops everything and removes the pods.
 * Not part of the agent.
 * @module
 */
import type { MeshIR, NodePod } from "../../lib/ir/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { ensurePeer, run } from "../../testbed/peers/mod.ts";
import { createPodNetwork, type NetPod } from "../../e2e/netns.ts";
import { type Proc, spawn, waitFor as waitForProc } from "../../e2e/peers/proc.ts";
import type { Spire } from "../../e2e/spire.ts";
import { olderBootstrap } from "../../e2e/identity_harness.ts";
import { identitySelectors, NodeIdentities } from "../identity/mod.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { XdsServer } from "../xds/server/mod.ts";
import { type EnvoyProcess, startEnvoy, waitFor } from "../xds/server/_test_utils.ts";
import { bundleSecret, svidSecret } from "../xds/translate/mod.ts";
import { NodeSnapshots } from "./snapshots.ts";

/** The port the client pods' rules redirect to. */
export const CAPTURE_PORT = 15001;

/** The /64 of the IPv6 VIPs a mesh may use in the rig (routed to lo in the client pods). */
export const VIP6_PREFIX = "fd00:96:0:70";

/** A backend pod: `serve`s as `name` (probe ports: 8080 HTTP, 7070 gRPC, 6000 echo, 6001 greet). */
export interface BackendPod {
  name: string;
  namespace: string;
  serviceAccount: string;
}

/** What the mesh is built from: each backend pod's IP and, with identity, SPIFFE ID. */
export interface RigPods {
  ips: Record<string, string>;
  ids: Record<string, string | undefined>;
}

/** What {@link startCaptureRig} sets up. */
export interface CaptureRigOptions {
  backends: BackendPod[];
  mesh: (pods: RigPods) => MeshIR;
  /** node-1's seed dependency set. */
  dependencies: string[];
  /** The (address, port) pairs the client pods' rules redirect to the capture listener. */
  redirect: (pods: RigPods) => [string, number][];
  /** Identity from this SPIRE (trust domain and pod registrations). */
  spire?: Spire;
  /** Start Envoy from a bootstrap without the internal-listener extension. */
  older?: boolean;
  /** The inspectors' detection timeout. */
  detectionTimeoutMs?: number;
}

/** A running rig. */
export interface CaptureRig {
  clientA: NetPod;
  clientB: NetPod;
  pods: RigPods;
  snapshots: NodeSnapshots;
  server: XdsServer;
  /** Every name Envoy asked for on demand, in order. */
  asked: string[];
  adminUrl: string;
  /** Runs `cmd` inside a pod's netns, killed after 20 s. */
  inPod(pod: NetPod, cmd: string, args: string[]): Promise<string>;
  /** Runs `_capture_probe_test_utils.ts <args>` inside a pod's netns (20 s at most). */
  probe(pod: NetPod, args: string[]): Promise<string>;
  /** One counter or gauge of Envoy's `/stats` (0 when absent). */
  stat(name: string): Promise<number>;
  envoyLogs(): string;
  close(): Promise<void>;
}

const PROBE = new URL("./_capture_probe_test_utils.ts", import.meta.url).pathname;

/** The client pods' nftables ruleset: TCP to the given (address, port) pairs → :15001. */
export function redirectRuleset(pairs: readonly [string, number][]): string {
  const rules = [["ip", false], ["ip6", true]].flatMap(([family, v6]) => {
    const mine = pairs.filter(([ip]) => ip.includes(":") === v6);
    const elements = mine.map(([ip, port]) => `${ip} . ${port}`).join(", ");
    return mine.length
      ? [`    ${family} daddr . tcp dport { ${elements} } redirect to :${CAPTURE_PORT}`]
      : [];
  });
  return [
    "table inet aether_capture_test {",
    "  chain output {",
    "    type nat hook output priority -100; policy accept;",
    ...rules,
    "  }",
    "}",
    "",
  ].join("\n");
}

/** Starts the pods, servers, rules, control plane and Envoy; cleans up if any step fails. */
export async function startCaptureRig(o: CaptureRigOptions): Promise<CaptureRig> {
  const [ip, nft] = [await ensurePeer("ip"), await ensurePeer("nft")];
  const network = await createPodNetwork();
  const procs: Proc[] = [];
  const asked: string[] = [];
  const cache = new SnapshotCache();
  const logger = new Logger("test", () => {});
  const trustDomain = o.spire?.trustDomain;
  const snapshots = new NodeSnapshots({
    cache,
    translate: {
      capture: { port: CAPTURE_PORT, detectionTimeoutMs: o.detectionTimeoutMs },
      ...(trustDomain ? { identity: { trustDomain, certified: [] } } : {}),
    },
  });
  const server = new XdsServer({
    cache,
    metrics: new Registry(),
    logger: new Logger("xds", () => {}),
    onDemand: (nodeId, typeUrl, names) => {
      asked.push(...names);
      return snapshots.onDemand(nodeId, typeUrl, names);
    },
    onNode: snapshots.onNode,
  });
  let envoy: EnvoyProcess | undefined;
  let identities: NodeIdentities | undefined;
  const close = async () => {
    await envoy?.stop();
    identities?.close();
    await server.close();
    for (const p of procs) await p.stop();
    await network.remove();
  };
  const inPod = (pod: NetPod, cmd: string, args: string[]) =>
    run(ip, ["netns", "exec", pod.netns, "timeout", "20", cmd, ...args]);
  try {
    const clientA = await network.addPod("aether-ca");
    const clientB = await network.addPod("aether-cb");
    const pods: RigPods = { ips: {}, ids: {} };
    const backendPods: NetPod[] = [];
    for (const b of o.backends) {
      const pod = await network.addPod("aether-cp");
      backendPods.push(pod);
      pods.ips[b.name] = pod.ip;
      const args = ["netns", "exec", pod.netns, Deno.execPath(), "run", "-A", PROBE];
      procs.push(spawn(`serve-${b.name}`, ip, [...args, "serve", b.name, pod.ip]));
    }
    for (const p of procs) {
      await waitForProc(
        `${p.name} ready`,
        () => Promise.resolve(p.output().includes("ready") || undefined),
        60_000,
        procs,
      );
    }
    const ruleset = redirectRuleset(o.redirect(pods));
    for (const c of [clientA, clientB]) {
      await run(ip, ["netns", "exec", c.netns, nft, "-f", "-"], { stdin: ruleset });
      // The bridge gives pods no IPv6 route: IPv6 VIPs get one (the rules redirect them first).
      await run(ip, ["-n", c.netns, "-6", "route", "add", `${VIP6_PREFIX}::/64`, "dev", "lo"]);
    }
    const view: NodePod[] = [
      { namespace: "a", name: "client-a", pod: clientA },
      { namespace: "b", name: "client-b", pod: clientB },
    ].map(({ namespace, name, pod }) => ({
      namespace,
      name,
      netnsPath: pod.netnsPath,
      ip: pod.ip,
      serviceAccount: "client",
    }));
    o.backends.forEach((b, i) =>
      view.push({
        namespace: b.namespace,
        name: b.name,
        netnsPath: backendPods[i].netnsPath,
        ip: backendPods[i].ip,
        serviceAccount: b.serviceAccount,
      })
    );
    if (o.spire) {
      const spire = o.spire;
      const wanted = new Map<string, { ns: string; sa: string }>();
      for (const p of view) {
        wanted.set(`${p.namespace}/${p.serviceAccount}`, {
          ns: p.namespace,
          sa: p.serviceAccount!,
        });
      }
      const ids: string[] = [];
      for (const { ns, sa } of wanted.values()) {
        // A second rig on the same SPIRE finds its entries there already.
        ids.push(
          await spire.registerPod(ns, sa).catch((e) => {
            if (!/already exists/i.test(String(e))) throw e;
            return `spiffe://${spire.trustDomain}/ns/${ns}/sa/${sa}`;
          }),
        );
      }
      o.backends.forEach((b) =>
        pods.ids[b.name] = `spiffe://${spire.trustDomain}/ns/${b.namespace}/sa/${b.serviceAccount}`
      );
      identities = new NodeIdentities({
        adminSocket: spire.adminSocket,
        logger,
        metrics: new Registry(),
        onChange: () => {
          const svids = identities!.svids();
          snapshots.setSecrets(
            [...svids.map(svidSecret), ...identities!.bundles().map(bundleSecret)],
            svids.map((s) => s.spiffeId),
          );
        },
      });
      identities.setWanted([...wanted.values()].map(({ ns, sa }, i) => ({
        spiffeId: ids[i],
        selectors: identitySelectors(ns, sa),
      })));
      const held = identities;
      await waitFor(
        "an SVID for every pod identity and the bundle",
        () => held.svids().length === ids.length && held.bundles().length > 0,
        120_000,
      );
    }
    snapshots.setMesh(o.mesh(pods));
    snapshots.setView({ nodeId: "node-1", pods: view, dependencies: o.dependencies });
    const xdsPort = await server.listen({ port: 0 });
    envoy = await startEnvoy({
      nodeId: "node-1",
      xdsPort,
      delta: true,
      ...(o.older ? { editBootstrap: olderBootstrap } : {}),
    });
    await waitFor("Envoy ACKs the node snapshot", () => server.isReady("node-1"));
    for (const c of [clientA, clientB]) {
      await waitFor(
        `capture listener bound in ${c.netns}`,
        async () => (await inPod(c, "ss", ["-ltnH"])).includes(`127.0.0.1:${CAPTURE_PORT}`),
      );
    }
    if (o.spire) {
      for (const p of backendPods) {
        await waitFor(
          `inbound listener bound in ${p.netns}`,
          async () => (await inPod(p, "ss", ["-ltnH"])).includes(`${p.ip}:15008`),
        );
      }
    }
    const started = envoy;
    return {
      clientA,
      clientB,
      pods,
      snapshots,
      server,
      asked,
      adminUrl: started.adminUrl,
      inPod,
      probe: (pod, args) => inPod(pod, Deno.execPath(), ["run", "-A", PROBE, ...args]),
      stat: async (name) => {
        const text = await (await fetch(`${started.adminUrl}/stats?filter=^${name}$`)).text();
        const m = text.match(/: (\d+)/);
        return m ? Number(m[1]) : 0;
      },
      envoyLogs: () => started.logs(),
      close,
    };
  } catch (e) {
    const logs = envoy?.logs() ?? "";
    await close();
    throw new Error(`${(e as Error).message}\nenvoy log:\n${logs}`);
  }
}
