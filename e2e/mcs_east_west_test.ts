/**
 * Issue 20, east-west gateway mode, two data planes on one machine (e2e/mcs_clusters.ts): `web`
 * exported by cluster B only; B's east-west gateway (`agent east-west-gateway`'s runtime, its own
 * real Envoy) runs as a pod of B — its own network namespace on B's bridge. nftables then drops
 * every connection to B's pods' :15008 except the gateway's: no pod-network route from A. The
 * direct dial is shown to fail (from A's pod and from the host, where A's node proxy dials), A's
 * flat-mode request fails with it, and once B's registrar publishes the gateway on its endpoint
 * records A's caller is answered by B's pod through the gateway, with the same XFCC as flat mode
 * (TLS end to end: By= B's pod, URI= A's caller). Figures (request latency in A's pod, flat and through the gateway) are logged.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { endpointRecords } from "../lib/mcs/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { waitFor } from "./peers/proc.ts";
import { type McsCluster, REGION, startMcsClusters } from "./mcs_clusters.ts";
import {
  CLUSTERSET_NAME,
  IMPORT_VIP,
  NS,
  podObjects,
  WEB_PORT,
  webImport,
  webService,
} from "./mcs_scene.ts";
import type { NetPod } from "./netns.ts";
import { type EastWestGateway, runEastWestGateway } from "../agent/east_west/mod.ts";
import { nodeDefaults } from "../agent/node/mod.ts";

/** The port B's gateway listens on, in its own netns. */
const GATEWAY_PORT = 15443;

interface CallResult {
  addresses: string[];
  counts: Record<string, number>;
  first: { status: number; headers?: Record<string, string> };
}

/** Runs e2e/mcs_client.ts in `cluster`'s pod `key` against web's clusterset name. */
async function call(cluster: McsCluster, key: string, count = 1) {
  const ip = await ensurePeer("ip");
  const out = await new Deno.Command(ip, {
    args: ["netns", "exec", cluster.pods[key].pod.netns, Deno.execPath(), "run", "-A"]
      .concat(["e2e/mcs_client.ts", "--name", CLUSTERSET_NAME])
      .concat(["--dns", `${cluster.dns.ip}:${cluster.dns.port}`, "--count", String(count)]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`mcs_client: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(text.split("\n").pop()!) as CallResult;
}

/**
 * Request latency from A's caller pod (ms, p50 and p90 of `n` sequential requests after one
 * warm-up), timed inside the pod: figures for the report, never asserted.
 */
async function latency(cluster: McsCluster, n: number): Promise<{ p50: number; p90: number }> {
  const script = `
const [ip] = await Deno.resolveDns(${JSON.stringify(CLUSTERSET_NAME)}, "A", {
  nameServer: { ipAddr: ${JSON.stringify(cluster.dns.ip)}, port: ${cluster.dns.port} },
});
const url = "http://" + ip + ":${WEB_PORT}/";
const ms = [];
for (let i = 0; i <= ${n}; i++) {
  const t = performance.now();
  const res = await fetch(url, { signal: AbortSignal.timeout(30000) });
  await res.text();
  if (res.status !== 200) throw new Error("HTTP " + res.status);
  if (i > 0) ms.push(performance.now() - t);
}
ms.sort((a, b) => a - b);
console.log(JSON.stringify({ p50: ms[Math.floor(ms.length / 2)], p90: ms[Math.floor(ms.length * 0.9)] }));
`;
  const out = await new Deno.Command(await ensurePeer("ip"), {
    args: ["netns", "exec", cluster.pods.caller.pod.netns, Deno.execPath(), "eval", script],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`latency: ${new TextDecoder().decode(out.stderr)}`);
  const r = JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!);
  return { p50: Number(r.p50.toFixed(2)), p90: Number(r.p90.toFixed(2)) };
}

/** A's EDS for web's import cluster (diagnostics). */
function importEds(cluster: McsCluster): string {
  const eps = cluster.node.snapshots.resources(cluster.nodeName)?.endpoints ?? [];
  return JSON.stringify(eps.filter((e) => e.name.includes("clusterset")));
}

/** Whether a TCP connection to `ip:port` opens within 5 s, dialled in `netns` (or the host). */
async function dials(ip: string, port: number, netns?: string): Promise<boolean> {
  const probe = ["timeout", "5", "bash", "-c", `exec 3<>/dev/tcp/${ip}/${port}`];
  const cmd = netns ? [await ensurePeer("ip"), "netns", "exec", netns, ...probe] : probe;
  const out = await new Deno.Command(cmd[0], { args: cmd.slice(1), stdout: "null", stderr: "null" })
    .output();
  return out.success;
}

async function nft(args: string[], stdin?: string): Promise<string> {
  const child = new Deno.Command(await ensurePeer("nft"), {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const err = new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`nft ${args.join(" ")}: ${err}`);
  return new TextDecoder().decode(out.stdout);
}

/**
 * The Envoy of a pod: a wrapper that runs the real Envoy in `pod`'s netns, its admin on the
 * pod's address (the agent's start-up check reaches it there; the bootstrap says 127.0.0.1).
 */
async function envoyInPod(dir: string, pod: NetPod): Promise<string> {
  const path = join(dir, "envoy-in-pod.sh");
  const envoy = await ensurePeer("envoy"), ip = await ensurePeer("ip");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh
# $1 = -c, $2 = the bootstrap the agent wrote
b="$2.pod"
sed 's/"127\\.0\\.0\\.1"/"${pod.ip}"/g' "$2" > "$b"
shift 2
exec '${ip}' netns exec '${pod.netns}' '${envoy}' -c "$b" "$@"
`,
    { mode: 0o755 },
  );
  return path;
}

/** What B's registrar publishes for web: the real record function, with the gateway or not. */
function records(b: McsCluster, trustDomain: string, gateway?: string): Map<string, string> {
  const objects: SourceObject[] = b.objects;
  const pods = new Map(
    objects.filter((o) => o.kind === "Pod").map((o) => [
      `${o.metadata.namespace}/${o.metadata.name}`,
      {
        namespace: o.metadata.namespace!,
        name: o.metadata.name,
        serviceAccount: (o.spec as { serviceAccountName?: string }).serviceAccountName!,
      },
    ]),
  );
  return endpointRecords(
    b.id,
    new Set([`${NS}/web`]),
    objects.filter((o) => o.kind === "EndpointSlice") as Parameters<typeof endpointRecords>[2],
    pods,
    trustDomain,
    new Map([[`${NS}/web`, [{ name: "http", protocol: "TCP", port: WEB_PORT }]]]),
    gateway,
  );
}

Deno.test("mcs e2e: east-west gateway — A's caller reaches B's pod only through B's gateway", async (t) => {
  const scene = await startMcsClusters({
    pods: {
      a: [{ key: "caller", serviceAccount: "caller" }],
      b: [{ key: "web", serviceAccount: "web", echo: true }],
    },
    objects: (cluster, pods, nodeName) =>
      cluster === "a" ? [...podObjects(Object.values(pods), nodeName), ...webImport()] : [
        ...podObjects(Object.values(pods), nodeName),
        ...webService([pods.web], nodeName),
        ...webImport(),
      ],
  });
  const { a, b, spire } = scene;
  const td = spire.trustDomain;
  const table = `aether_ew_${crypto.randomUUID().slice(0, 8)}`;
  const dir = await Deno.makeTempDir({ prefix: "aether-ew-" });
  let gw: EastWestGateway | undefined;
  let tableMade = false;
  const webIp = b.pods.web.pod.ip;
  const figures: Record<string, number | string> = {};
  try {
    const gwPod = await b.net.addPod("aether-mcs-bgw");
    const gateway = `${gwPod.ip}:${GATEWAY_PORT}`;
    const registrar = scene.writer(b, 10);
    await registrar.publish(records(b, td));

    await t.step("flat mode first: A's caller reaches B's pod directly", async () => {
      await waitFor("B's web answers A's caller (flat)", async () => {
        const r = await call(a, "caller");
        return r.counts.web === 1 ? true : undefined;
      }, 90_000);
      assert(await dials(webIp, 15008, a.pods.caller.pod.netns), "A's pod dials B's pod:15008");
      assert(await dials(webIp, 15008), "the host (A's node proxy) dials B's pod:15008");
      figures.flatMs = JSON.stringify(await latency(a, 200));
    });

    await t.step("B's gateway: its own Envoy in its own pod, ready", async () => {
      gw = await runEastWestGateway({
        kv: scene.kv,
        origin: { region: REGION, cluster: b.name },
        listen: gateway,
        meshDomain: nodeDefaults.meshDomain,
        adminAddress: "127.0.0.1:0",
        xdsAddress: `${b.net.gateway}:0`,
        nodeId: "east-west-b",
        envoy: await envoyInPod(dir, gwPod),
        logger: new Logger("east-west-b", (l) => scene.logs.push(l), "info"),
      });
      await gw.waitReady(120_000);
      assertEquals(gw.routes(), { [`${WEB_PORT}.web.${NS}.svc.clusterset.local`]: [webIp] });
    });

    await t.step("no pod-network route from A: direct dials to B's pods fail", async () => {
      const subnet = b.net.subnet;
      await nft(
        ["-f", "-"],
        `table ip ${table} {
  chain egress_ew {
    type filter hook output priority 0; policy accept;
    ip daddr ${subnet} tcp dport 15008 counter drop
  }
  chain forward_ew {
    type filter hook forward priority 0; policy accept;
    ip saddr != ${gwPod.ip} ip daddr ${subnet} tcp dport 15008 counter drop
  }
}
`,
      );
      tableMade = true;
      assert(!await dials(webIp, 15008, a.pods.caller.pod.netns), "A's pod must not reach :15008");
      assert(!await dials(webIp, 15008), "the host (A's node proxy) must not reach :15008");
      assert(await dials(webIp, 15008, gwPod.netns), "the gateway's pod still reaches it");
      const listed = await nft(["list", "table", "ip", table]);
      assert(/counter packets [1-9]/.test(listed), listed);
      // A's node proxy dials B's pod directly (flat records): refused now.
      await waitFor("A's flat-mode request fails", async () => {
        const r = await call(a, "caller");
        return r.counts.web === undefined ? true : undefined;
      }, 90_000);
    });

    await t.step(
      "gateway mode: A's caller is answered through B's gateway, same XFCC",
      async () => {
        await registrar.publish(records(b, td, gateway));
        await waitFor("B's web answers A's caller through the gateway", async () => {
          const r = await call(a, "caller");
          if (r.counts.web === 1) return true;
          throw new Error(`${JSON.stringify(r.counts)}; A's EDS: ${importEds(a)}`);
        }, 90_000);
        const r = await call(a, "caller", 20);
        assertEquals(r.addresses, [IMPORT_VIP]);
        assertEquals(r.counts, { web: 20 });
        const xfcc = r.first.headers?.["x-forwarded-client-cert"] ?? "";
        assert(xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`), xfcc);
        assert(xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`), xfcc);
        // The connections went through the gateway's passthrough chain.
        const stats = await gw!.envoy!.admin("/stats?filter=east_west_");
        const cx = /east_west_[0-9a-z_]*\.downstream_cx_total: (\d+)/.exec(stats);
        assert(cx && Number(cx[1]) >= 1, stats);
        figures.gatewayConnections = Number(cx![1]);
        figures.gatewayMs = JSON.stringify(await latency(a, 200));
        // Still no direct path: only the gateway's pod reaches B's pods.
        assert(!await dials(webIp, 15008));
      },
    );

    await t.step("an unknown SNI is closed by the gateway; a known one reaches a pod", async () => {
      const handshake = async (sni: string) => {
        const tcp = await Deno.connect({ hostname: gwPod.ip, port: GATEWAY_PORT });
        const tls = await Deno.startTls(tcp, { hostname: sni });
        try {
          await tls.handshake();
          return "completed";
        } catch (e) {
          return String(e);
        } finally {
          try {
            tls.close();
          } catch { /* closed already */ }
        }
      };
      // A pod answers (its SPIFFE certificate is no public one: not trusted here).
      const known = await handshake(`${WEB_PORT}.web.${NS}.svc.clusterset.local`);
      assert(/certificate|issuer|cert/i.test(known), known);
      // Nothing answers: the gateway closes the connection before any ServerHello.
      const unknown = await handshake(`9999.nothing.${NS}.svc.clusterset.local`);
      assert(!/certificate|issuer|cert/i.test(unknown) && unknown !== "completed", unknown);
      figures.unknownSni = unknown;
    });
    console.log("east-west figures:", JSON.stringify(figures));
  } finally {
    await gw?.close().catch(() => {});
    if (tableMade) await nft(["delete", "table", "ip", table]).catch(() => "");
    await scene.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
