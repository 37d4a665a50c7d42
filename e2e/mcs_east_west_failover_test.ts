/**
 * Issue 20, east-west gateway mode gives flat mode's failover results (e2e/mcs_failover_test.ts)
 * with no pod-network route from A to B's pods (e2e/mcs_east_west_scene.ts): `web` exported by
 * both clusters, B's registrar (its own process) publishing B's gateway on its records. Locality
 * first: A's pod answers, B is there as one endpoint at B's gateway (never B's pod address). A's
 * pod gone → traffic fails over to B *through the gateway*, and no request sent after A's proxy
 * ejected A's endpoint fails. B's registrar SIGKILLed → B's gateway endpoint leaves A's proxy
 * within the lease TTL + 2 s, no request fails; a new registrar → it is back.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { type Proc, waitFor } from "./peers/proc.ts";
import { type McsCluster, startMcsClusters } from "./mcs_clusters.ts";
import {
  CLUSTERSET_NAME,
  NS,
  podObjects,
  type ScenePod,
  webImport,
  webService,
} from "./mcs_scene.ts";
import {
  callIn,
  dials,
  type EastWestSetup,
  gatewayRecords,
  startEastWest,
} from "./mcs_east_west_scene.ts";
import { proxyEndpoints, seen, served, startLoad } from "./mcs_failover_steps.ts";

/** Lease TTL of B's registrars (seconds). */
const TTL = 4;

/** The counts by backend of `count` calls by name from A's caller. */
async function callByName(a: McsCluster, count: number): Promise<Record<string, number>> {
  return (await callIn(a, "caller", CLUSTERSET_NAME, count)).counts;
}

/** The gateway's connections for web's SNIs, summed. */
async function webConnections(ew: EastWestSetup): Promise<number> {
  const c = await ew.connections();
  return Object.entries(c).filter(([k]) => k.includes("web")).reduce((s, [, n]) => s + n, 0);
}

Deno.test("mcs e2e: east-west gateway — locality, failover through B's gateway, registrar loss", async (t) => {
  const scene = await startMcsClusters({
    pods: {
      a: [{ key: "caller", serviceAccount: "caller" }, {
        key: "web-a",
        serviceAccount: "web",
        echo: true,
      }],
      b: [{ key: "web-b", serviceAccount: "web", echo: true }],
    },
    objects: (cluster, pods, nodeName) => [
      ...podObjects(Object.values(pods), nodeName),
      ...webService([pods[cluster === "a" ? "web-a" : "web-b"]], nodeName),
      ...webImport(),
    ],
  });
  const { a, b, spire } = scene;
  const td = spire.trustDomain;
  const aIp = a.pods["web-a"].pod.ip, bIp = b.pods["web-b"].pod.ip;
  const procs: Proc[] = [];
  const loads: { kill(): Promise<void> }[] = [];
  const dir = await Deno.makeTempDir({ prefix: "aether-mcs-ew-load-" });
  const figures: Record<string, unknown> = {};
  let ew: EastWestSetup | undefined;
  try {
    ew = await startEastWest(scene);
    const gwIp = ew.pod.ip;
    await ew.isolate();
    assert(!await dials(bIp, 15008), "the host (A's node proxy) must not reach B's pod:15008");
    assert(!await dials(bIp, 9090, a.pods.caller.pod.netns), "A's pod must not reach B's pod");
    const bRecords = () => gatewayRecords(b, ["web"], td, ew!.address);
    const registrarA = scene.writer(a, 10);
    await registrarA.publish(a.records());
    let registrarB = await scene.writerProcess(b, TTL, bRecords());
    procs.push(registrarB);

    await t.step("locality first: A's pod answers; B is one endpoint at B's gateway", async () => {
      await waitFor("A's web answers", async () => {
        const c = await callByName(a, 1);
        return c["web-a"] === 1 ? true : undefined;
      }, 90_000);
      assertEquals(await callByName(a, 20), { "web-a": 20 });
      await waitFor("B's gateway endpoint in A's proxy", async () => {
        return (await proxyEndpoints(a)).has(gwIp) ? true : undefined;
      }, 60_000);
      const eps = await proxyEndpoints(a);
      assertEquals([...eps.keys()].sort(), [aIp, gwIp].sort());
      assert(!eps.has(bIp), "B's pod is never dialled directly");
    });

    await t.step("A's pod gone: failover to B through its gateway, none fails after", async () => {
      const before = await webConnections(ew!);
      const load = await startLoad(a, dir);
      loads.push(load);
      await served(a, aIp, 20);
      const removed = a.objects.findIndex((o) => o.kind === "EndpointSlice");
      a.objects.splice(removed - 1, 2, ...webService([] as ScenePod[], a.nodeName));
      await a.write();
      // The pod dies first (its requests fail), then its endpoint leaves the registry.
      await a.echos["web-a"].stop();
      await waitFor("a request to A's dead pod failed", async () => {
        const rows = (await a.node.envoy!.admin("/stats?filter=upstream_rq_5xx")).split("\n");
        return rows.some((r) => r.includes("mcs-") && !r.endsWith(": 0")) ? true : undefined;
      });
      const t0 = Date.now();
      await registrarA.publish(a.records());
      const ejected = await seen("A's endpoint ejected from A's proxy", async () => {
        const eps = await proxyEndpoints(a);
        return !eps.has(aIp) && eps.has(gwIp);
      });
      await served(a, gwIp, 50);
      const r = await load.stop();
      const through = (await webConnections(ew!)) - before;
      figures.failover = {
        ejectedAfterMs: ejected - t0,
        failed: r.failed,
        sent: r.sent,
        gatewayConnections: through,
      };
      assert(r.ok > 0, JSON.stringify(r));
      assert(
        r.lastFailedSentAt <= ejected,
        `a request sent ${r.lastFailedSentAt - ejected} ms after the ejection failed: ${
          JSON.stringify(r)
        }`,
      );
      assert(through >= 1, `no connection through B's gateway: ${JSON.stringify(figures)}`);
      const byName = await callIn(a, "caller", CLUSTERSET_NAME, 10);
      assertEquals(byName.counts, { "web-b": 10 });
      const xfcc = byName.first.headers?.["x-forwarded-client-cert"] ?? "";
      assert(xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`), xfcc);
      assert(xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`), xfcc);
      assert(!await dials(bIp, 15008), "still no direct path to B's pod");
    });

    await t.step("A's pod back: locality again", async () => {
      await a.restartEcho("web-a");
      a.objects.splice(
        a.objects.findIndex((o) => o.kind === "Service" && o.metadata.name === "web"),
        2,
        ...webService([a.pods["web-a"]], a.nodeName),
      );
      await a.write();
      await registrarA.publish(a.records());
      await waitFor("A's web answers again", async () => {
        const c = await callByName(a, 1);
        return c["web-a"] === 1 ? true : undefined;
      }, 60_000);
      assertEquals(await callByName(a, 10), { "web-a": 10 });
    });

    await t.step("B's registrar SIGKILLed: B's gateway endpoint leaves A's proxy", async () => {
      const load = await startLoad(a, dir);
      loads.push(load);
      await served(a, aIp, 20);
      const t0 = Date.now();
      registrarB.child.kill("SIGKILL");
      const gone = await seen("B's gateway endpoint gone from A's proxy", async () => {
        return !(await proxyEndpoints(a)).has(gwIp);
      }, (TTL + 30) * 1000);
      await served(a, aIp, 20);
      const r = await load.stop();
      figures.registrarKilled = { goneAfterMs: gone - t0, ttlMs: TTL * 1000, failed: r.failed };
      assert(gone - t0 <= (TTL + 2) * 1000, `gone after ${gone - t0} ms`);
      assertEquals(r.failed, 0, JSON.stringify(r));
      // B's gateway reads B's records too: with them gone it passes nothing through.
      await waitFor("B's gateway has no route", () => {
        return Promise.resolve(Object.keys(ew!.gateway.routes()).length === 0 ? true : undefined);
      });
    });

    await t.step("B's registrar restarted: B's gateway endpoint is back and answers", async () => {
      const t0 = Date.now();
      registrarB = await scene.writerProcess(b, TTL, bRecords());
      procs.push(registrarB);
      const back = await seen("B's gateway endpoint back in A's proxy", async () => {
        return (await proxyEndpoints(a)).has(gwIp);
      });
      figures.registrarRestarted = { backAfterMs: back - t0 };
      // With A's pod failing again, B answers through the gateway once more.
      await a.echos["web-a"].stop();
      a.objects.splice(
        a.objects.findIndex((o) => o.kind === "Service" && o.metadata.name === "web"),
        2,
        ...webService([] as ScenePod[], a.nodeName),
      );
      await a.write();
      await registrarA.publish(a.records());
      await waitFor("B's web answers through the gateway again", async () => {
        const c = await callByName(a, 1);
        return c["web-b"] === 1 ? true : undefined;
      }, 60_000);
      assertEquals(await callByName(a, 10), { "web-b": 10 });
    });
    console.log(`mcs east-west failover figures: ${JSON.stringify(figures)}`);
  } finally {
    for (const l of loads) await l.kill();
    for (const p of procs) await p.stop();
    await ew?.close();
    await scene.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
