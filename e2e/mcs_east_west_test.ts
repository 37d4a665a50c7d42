/**
 * Issue 20, east-west gateway mode, two data planes on one machine (e2e/mcs_clusters.ts): `web`
 * exported by cluster B only; B's east-west gateway (`agent east-west-gateway`'s runtime, its own
 * real Envoy) runs as a pod of B — its own network namespace on B's bridge. nftables then drops
 * every connection to B's pods' :15008 except the gateway's, and everything from A's pods to B's
 * pods but to the gateway: no pod-network route from A (e2e/mcs_east_west_scene.ts). The direct
 * dial is shown to fail (from A's pod and from the host, where A's node proxy dials), A's
 * flat-mode request fails with it, and once B's registrar publishes the gateway on its endpoint
 * records A's caller is answered by B's pod through the gateway, with the same XFCC as flat mode
 * (TLS end to end: By= B's pod, URI= A's caller). Figures (request latency in A's pod, flat and
 * through the gateway) are logged.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { waitFor } from "./peers/proc.ts";
import { type McsCluster, startMcsClusters } from "./mcs_clusters.ts";
import {
  CLUSTERSET_NAME,
  IMPORT_VIP,
  NS,
  podObjects,
  WEB_PORT,
  webImport,
  webService,
} from "./mcs_scene.ts";
import {
  callIn,
  dials,
  type EastWestSetup,
  GATEWAY_PORT,
  gatewayRecords,
  startEastWest,
} from "./mcs_east_west_scene.ts";

/** Calls web's clusterset name from `cluster`'s pod `key`. */
const call = (cluster: McsCluster, key: string, count = 1) =>
  callIn(cluster, key, CLUSTERSET_NAME, count);

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
  let ew: EastWestSetup | undefined;
  const webIp = b.pods.web.pod.ip;
  const figures: Record<string, number | string> = {};
  try {
    const registrar = scene.writer(b, 10);
    await registrar.publish(gatewayRecords(b, ["web"], td));

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
      ew = await startEastWest(scene);
      assertEquals(ew.gateway.routes(), {
        [`${WEB_PORT}.web.${NS}.svc.clusterset.local`]: [webIp],
      });
    });

    await t.step("no pod-network route from A: direct dials to B's pods fail", async () => {
      await ew!.isolate();
      assert(!await dials(webIp, 15008, a.pods.caller.pod.netns), "A's pod must not reach :15008");
      assert(!await dials(webIp, 15008), "the host (A's node proxy) must not reach :15008");
      assert(await dials(webIp, 15008, ew!.pod.netns), "the gateway's pod still reaches it");
      // A's node proxy dials B's pod directly (flat records): refused now.
      await waitFor("A's flat-mode request fails", async () => {
        const r = await call(a, "caller");
        return r.counts.web === undefined ? true : undefined;
      }, 90_000);
    });

    await t.step(
      "gateway mode: A's caller is answered through B's gateway, same XFCC",
      async () => {
        await registrar.publish(gatewayRecords(b, ["web"], td, ew!.address));
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
        const cx = await ew!.connections();
        const web = cx[`${WEB_PORT}_web_${NS}_svc_clusterset_local`] ?? 0;
        assert(web >= 1, JSON.stringify(cx));
        figures.gatewayConnections = web;
        figures.gatewayMs = JSON.stringify(await latency(a, 200));
        // Still no direct path: only the gateway's pod reaches B's pods.
        assert(!await dials(webIp, 15008));
      },
    );

    await t.step("an unknown SNI is closed by the gateway; a known one reaches a pod", async () => {
      const handshake = async (sni: string) => {
        const tcp = await Deno.connect({ hostname: ew!.pod.ip, port: GATEWAY_PORT });
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
    await ew?.close();
    await scene.close();
  }
});
