/**
 * East-west gateway mode on the two-data-plane scene (e2e/mcs_clusters.ts): cluster B's east-west
 * gateway (`agent east-west-gateway`'s runtime, its own real Envoy) as a pod of B — its own netns
 * on B's bridge —, an nftables table that takes away every pod-network route from A to B's pods
 * but the gateway's address, and what B's registrar publishes for several exported Services with
 * the gateway on every record (the real record function). Used by the `mcs_east_west_*` tests.
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import { endpointRecords } from "../lib/mcs/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { type EastWestGateway, runEastWestGateway } from "../agent/east_west/mod.ts";
import { nodeDefaults } from "../agent/node/mod.ts";
import { ensurePeer, run } from "../testbed/peers/mod.ts";
import { type McsCluster, type McsClusters, REGION } from "./mcs_clusters.ts";
import { NS, type ScenePod, WEB_PORT, WEB_TARGET } from "./mcs_scene.ts";
import type { NetPod } from "./netns.ts";
import { envoyInPod } from "./envoy_in_pod.ts";

/** The port B's gateway listens on, in its own netns. */
export const GATEWAY_PORT = 15443;

/** A call's result (e2e/mcs_client.ts). */
export interface CallResult {
  addresses: string[];
  counts: Record<string, number>;
  first: { status: number; headers?: Record<string, string> };
}

/** Runs e2e/mcs_client.ts in `cluster`'s pod `key` against `name` (its cluster's DNS). */
export async function callIn(
  cluster: McsCluster,
  key: string,
  name: string,
  count = 1,
): Promise<CallResult> {
  const out = await new Deno.Command(await ensurePeer("ip"), {
    args: ["netns", "exec", cluster.pods[key].pod.netns, Deno.execPath(), "run", "-A"]
      .concat(["e2e/mcs_client.ts", "--name", name])
      .concat(["--dns", `${cluster.dns.ip}:${cluster.dns.port}`, "--count", String(count)]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`mcs_client: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(text.split("\n").pop()!) as CallResult;
}

/** Whether a TCP connection to `ip:port` opens within 5 s, dialled in `netns` (or the host). */
export async function dials(ip: string, port: number, netns?: string): Promise<boolean> {
  const probe = ["timeout", "5", "bash", "-c", `exec 3<>/dev/tcp/${ip}/${port}`];
  const cmd = netns ? [await ensurePeer("ip"), "netns", "exec", netns, ...probe] : probe;
  const out = await new Deno.Command(cmd[0], { args: cmd.slice(1), stdout: "null", stderr: "null" })
    .output();
  return out.success;
}

/** Runs `nft` with `args` (and `stdin`); its output (the project's command runner). */
export async function nft(args: string[], stdin?: string): Promise<string> {
  return await run(await ensurePeer("nft"), args, stdin === undefined ? {} : { stdin });
}

/** B's gateway and the isolation of B's pods. */
export interface EastWestSetup {
  /** The gateway's pod (on B's bridge). */
  pod: NetPod;
  /** `<gateway pod ip>:<GATEWAY_PORT>`: what B's records carry. */
  address: string;
  gateway: EastWestGateway;
  /** The gateway's downstream connections per clusterset SNI (from its Envoy's stats). */
  connections(): Promise<Record<string, number>>;
  /**
   * Takes the pod-network routes from A to B's pods away: no `:15008` to B's pods from the host
   * (where A's node proxy dials) nor from anything but the gateway; nothing at all from A's pods
   * to B's pods but to the gateway.
   */
  isolate(): Promise<void>;
  close(): Promise<void>;
}

/** Starts B's gateway in a pod of B (ready, reading B's records from the scene's registry). */
export async function startEastWest(scene: McsClusters): Promise<EastWestSetup> {
  const { a, b } = scene;
  const dir = await Deno.makeTempDir({ prefix: "aether-ew-" });
  const table = `aether_ew_${crypto.randomUUID().slice(0, 8)}`;
  let tableMade = false;
  let gateway: EastWestGateway | undefined;
  const close = async () => {
    await gateway?.close().catch(() => {});
    if (tableMade) await nft(["delete", "table", "ip", table]).catch(() => "");
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    const pod = await b.net.addPod(`aether-ew-${crypto.randomUUID().slice(0, 6)}`);
    const address = `${pod.ip}:${GATEWAY_PORT}`;
    gateway = await runEastWestGateway({
      kv: scene.kv,
      origin: { region: REGION, cluster: b.name },
      listen: address,
      meshDomain: nodeDefaults.meshDomain,
      adminAddress: "127.0.0.1:0",
      xdsAddress: `${b.net.gateway}:0`,
      nodeId: "east-west-b",
      envoy: await envoyInPod(dir, pod),
      logger: new Logger("east-west-b", (l) => scene.logs.push(l), "info"),
    });
    await gateway.waitReady(120_000);
    const gw = gateway;
    return {
      pod,
      address,
      gateway: gw,
      connections: async () => {
        const stats = await gw.envoy!.admin("/stats?filter=east_west_.*downstream_cx_total");
        const out: Record<string, number> = {};
        for (const m of stats.matchAll(/east_west_([0-9a-z_]+)\.downstream_cx_total: (\d+)/g)) {
          out[m[1]] = Number(m[2]);
        }
        return out;
      },
      isolate: async () => {
        await nft(
          ["-f", "-"],
          `table ip ${table} {
  chain egress_ew {
    type filter hook output priority 0; policy accept;
    ip daddr ${b.net.subnet} tcp dport 15008 counter drop
  }
  chain forward_ew {
    type filter hook forward priority 0; policy accept;
    ip saddr != ${pod.ip} ip daddr ${b.net.subnet} tcp dport 15008 counter drop
    ip saddr ${a.net.subnet} ip daddr ${b.net.subnet} ip daddr != ${pod.ip} counter drop
  }
}
`,
        );
        tableMade = true;
      },
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * An exported Service `name` (port WEB_PORT → WEB_TARGET) with its EndpointSlice over `backends`
 * (ready, their Pod as targetRef).
 */
export function exportedService(
  name: string,
  backends: readonly ScenePod[],
  nodeName: string,
): SourceObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: NS, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        ports: [{
          name: "http",
          protocol: "TCP",
          port: WEB_PORT,
          appProtocol: "http",
          targetPort: WEB_TARGET,
        }],
      },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `${name}-1`,
        namespace: NS,
        labels: { "kubernetes.io/service-name": name },
      },
      addressType: "IPv4",
      ports: [{ name: "http", protocol: "TCP", port: WEB_TARGET }],
      endpoints: backends.map((p) => ({
        addresses: [p.pod.ip],
        conditions: { ready: true },
        nodeName,
        targetRef: { kind: "Pod", name: p.name, namespace: NS },
      })),
    },
  ];
}

/**
 * What `cluster`'s registrar publishes for its exported `services` (names in NS) over its current
 * objects: the real record function, with each port's Service port and, given, the gateway.
 */
export function gatewayRecords(
  cluster: McsCluster,
  services: readonly string[],
  trustDomain: string,
  gateway?: string,
): Map<string, string> {
  const objects = cluster.objects;
  const pods = new Map(
    objects.filter((o) => o.kind === "Pod").map((o) => [
      `${o.metadata.namespace}/${o.metadata.name}`,
      {
        namespace: o.metadata.namespace!,
        name: o.metadata.name,
        serviceAccount: (o.spec as { serviceAccountName?: string }).serviceAccountName ?? "default",
      },
    ]),
  );
  const port = [{ name: "http", protocol: "TCP", port: WEB_PORT }];
  return endpointRecords(
    cluster.id,
    new Set(services.map((s) => `${NS}/${s}`)),
    objects.filter((o) => o.kind === "EndpointSlice") as Parameters<typeof endpointRecords>[2],
    pods,
    trustDomain,
    new Map(services.map((s) => [`${NS}/${s}`, port])),
    gateway,
  );
}
