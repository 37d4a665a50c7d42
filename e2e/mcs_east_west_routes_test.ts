/**
 * Issue 20, east-west gateway mode gives flat mode's routing results (e2e/mcs_mtls_test.ts,
 * e2e/mcs_producer_routes_test.ts) with no pod-network route from A to B's pods
 * (e2e/mcs_east_west_scene.ts). B exports `web`, `web-v1` and `web-v2` (a pod each) and
 * publishes its gateway on their records. A's caller reaches `web` by its clusterset name and
 * through `front`, whose HTTPRoute's backendRef is the ServiceImport: B's pod answers through the
 * gateway with B's SPIFFE ID in XFCC. B's 90/10 producer route on `web` (web-v1/web-v2) is obeyed
 * by A's caller, every request through the gateway (its web-v1 and web-v2 SNI chains count the
 * connections). A headless import of a Service B exports behind its gateway is left out of A's
 * DNS (its pod addresses are not routed from A); with a flat record it answers B's pod address.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { producerRouteEntries, vipServiceName } from "../lib/mcs/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { waitFor } from "./peers/proc.ts";
import { startMcsClusters } from "./mcs_clusters.ts";
import {
  CLUSTERSET_NAME,
  FRONT_VIP,
  frontRoute,
  IMPORT_VIP,
  NS,
  podObjects,
  WEB_PORT,
  WEB_TARGET,
  webImport,
} from "./mcs_scene.ts";
import {
  callIn,
  dials,
  type EastWestSetup,
  exportedService,
  gatewayRecords,
  startEastWest,
} from "./mcs_east_west_scene.ts";

const MCS = "multicluster.x-k8s.io";
const PORTS = [{ name: "http", protocol: "TCP", port: WEB_PORT, appProtocol: "http" }];

/** A ServiceImport `name` of `type` (the clusterset VIP Service only for `web`: webImport). */
function serviceImport(name: string, type = "ClusterSetIP"): SourceObject {
  return {
    apiVersion: `${MCS}/v1beta1`,
    kind: "ServiceImport",
    metadata: { name, namespace: NS },
    spec: { type, ports: PORTS },
  };
}

/** B's producer route of `web`: 90 % web-v1, 10 % web-v2 (as B's API server admitted it). */
const split = {
  metadata: { namespace: NS, name: "canary", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: {
    parentRefs: [{ group: "", kind: "Service", name: "web", port: WEB_PORT }],
    rules: [{
      matches: [{ path: { type: "PathPrefix", value: "/" } }],
      backendRefs: [
        { group: "", kind: "Service", name: "web-v1", port: WEB_PORT, weight: 90 },
        { group: "", kind: "Service", name: "web-v2", port: WEB_PORT, weight: 10 },
      ],
    }],
  },
};

const EXPORTED = ["web", "web-v1", "web-v2", "web-h"];

Deno.test("mcs e2e: east-west gateway — backendRef to the ServiceImport and B's producer route", async (t) => {
  const scene = await startMcsClusters({
    pods: {
      a: [{ key: "caller", serviceAccount: "caller" }],
      b: ["web", "web-2", "web-v1", "web-v2", "web-h"].map((key) => ({
        key,
        serviceAccount: "web",
        echo: true,
      })),
    },
    objects: (cluster, pods, nodeName) =>
      cluster === "a"
        ? [
          ...podObjects(Object.values(pods), nodeName),
          ...webImport(),
          ...frontRoute(),
          serviceImport("web-v1"),
          serviceImport("web-v2"),
          serviceImport("web-h", "Headless"),
        ]
        : [
          ...podObjects(Object.values(pods), nodeName),
          ...EXPORTED.flatMap((s) => exportedService(s, [pods[s]], nodeName)),
          ...webImport(),
        ],
  });
  const { a, b, spire } = scene;
  const td = spire.trustDomain;
  const figures: Record<string, unknown> = {};
  let ew: EastWestSetup | undefined;
  try {
    ew = await startEastWest(scene);
    await ew.isolate();
    const webIp = b.pods.web.pod.ip;
    assert(!await dials(webIp, 15008), "the host (A's node proxy) must not reach B's pod:15008");
    assert(!await dials(webIp, WEB_TARGET, a.pods.caller.pod.netns), "A's pod must not reach B's");
    const eps = gatewayRecords(b, EXPORTED, td, ew.address);
    const registrar = scene.writer(b, 10);
    await registrar.publish(eps);
    const xfccOk = (xfcc: string) =>
      xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`) &&
      xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`);

    await t.step(
      "by name and by HTTPRoute backendRef to the ServiceImport, via B's gateway",
      async () => {
        await waitFor("B's web answers A's caller through the gateway", async () => {
          const r = await callIn(a, "caller", CLUSTERSET_NAME);
          return r.counts.web === 1 ? true : undefined;
        }, 90_000);
        const byName = await callIn(a, "caller", CLUSTERSET_NAME, 10);
        assertEquals(byName.addresses, [IMPORT_VIP]);
        assertEquals(byName.counts, { web: 10 });
        assert(
          xfccOk(byName.first.headers?.["x-forwarded-client-cert"] ?? ""),
          JSON.stringify(byName.first),
        );
        const before = (await ew!.connections())[`${WEB_PORT}_web_${NS}_svc_clusterset_local`] ?? 0;
        const front = await callIn(a, "caller", "front.aether.internal", 10);
        assertEquals(front.addresses, [FRONT_VIP]);
        assertEquals(front.counts, { web: 10 });
        const xfcc = front.first.headers?.["x-forwarded-client-cert"] ?? "";
        assert(xfccOk(xfcc), xfcc);
        const after = (await ew!.connections())[`${WEB_PORT}_web_${NS}_svc_clusterset_local`] ?? 0;
        figures.frontConnections = after - before;
        assert(after > before, `front's calls did not cross the gateway: ${before} → ${after}`);
      },
    );

    await t.step("B's 90/10 producer route is obeyed through the gateway", async () => {
      const routes = producerRouteEntries(
        b.id,
        [split],
        new Set(EXPORTED.map((s) => `${NS}/${s}`)),
      );
      assertEquals([...routes.keys()], [`routes/HTTPRoute/${NS}/canary`]);
      await registrar.publish(new Map([...eps, ...routes]));
      await waitFor("the producer route at A", async () => {
        const r = await callIn(a, "caller", CLUSTERSET_NAME, 10);
        return Object.keys(r.counts).every((k) => k === "web-v1" || k === "web-v2")
          ? true
          : undefined;
      }, 90_000);
      const r = await callIn(a, "caller", CLUSTERSET_NAME, 400);
      const v1 = r.counts["web-v1"] ?? 0, v2 = r.counts["web-v2"] ?? 0;
      figures.split = { v1, v2 };
      assertEquals(v1 + v2, 400, JSON.stringify(r.counts));
      assert(v2 >= 12 && v2 <= 80, `web-v2 got ${v2} of 400 (3–20 % expected)`);
      assert(xfccOk(r.first.headers?.["x-forwarded-client-cert"] ?? ""), JSON.stringify(r.first));
      const c = await ew!.connections();
      const sni = (s: string) =>
        c[`${WEB_PORT}_${s.replaceAll("-", "_")}_${NS}_svc_clusterset_local`];
      figures.splitConnections = { v1: sni("web-v1"), v2: sni("web-v2") };
      assert(sni("web-v1") >= 1 && sni("web-v2") >= 1, JSON.stringify(c));
    });

    await t.step("a headless import behind B's gateway is left out of A's DNS", async () => {
      const name = `web-h.${NS}.svc.clusterset.local`;
      const hIp = b.pods["web-h"].pod.ip;
      const answers = () =>
        Deno.resolveDns(name, "A", { nameServer: { ipAddr: a.dns.ip, port: a.dns.port } })
          .catch((e) => e instanceof Deno.errors.NotFound ? [] : Promise.reject(e));
      const routes = producerRouteEntries(
        b.id,
        [split],
        new Set(EXPORTED.map((s) => `${NS}/${s}`)),
      );
      // web-h's record without the gateway (as flat mode publishes it): its pod address answers.
      const flat = gatewayRecords(b, ["web-h"], td);
      await registrar.publish(new Map([...eps, ...routes, ...flat]));
      await waitFor(`${name} → B's pod in A's DNS (flat record)`, async () => {
        const ips = await answers();
        return ips.length === 1 && ips[0] === hIp ? true : undefined;
      }, 60_000);
      // … which A's pods cannot reach in gateway mode; so behind the gateway it is left out.
      assert(!await dials(hIp, WEB_TARGET, a.pods.caller.pod.netns), "A's pod reached B's pod");
      await registrar.publish(new Map([...eps, ...routes]));
      await waitFor(`${name} NXDOMAIN in A's DNS (behind the gateway)`, async () => {
        return (await answers()).length === 0 ? true : undefined;
      }, 60_000);
      figures.headless = { flat: [hIp], gateway: [] };
    });
    await t.step(
      "two pods of web behind the gateway: one endpoint of weight 2, both answer",
      async () => {
        const i = b.objects.findIndex((o) => o.kind === "Service" && o.metadata.name === "web");
        b.objects.splice(
          i,
          2,
          ...exportedService("web", [b.pods.web, b.pods["web-2"]], b.nodeName),
        );
        await b.write();
        // The producer route is gone with this publish: callers of web reach web's pods again.
        await registrar.publish(gatewayRecords(b, EXPORTED, td, ew!.address));
        const prefix = `${vipServiceName(NS, "web")}.aether.internal|${NS}/caller::${
          ew!.address
        }::`;
        const weight = await waitFor("B's gateway endpoint of weight 2 in A's proxy", async () => {
          const lines = (await a.node.envoy!.admin("/clusters")).split("\n");
          const w = lines.find((l) => l.startsWith(`${prefix}weight::`))?.split("::").pop();
          return w === "2" ? Number(w) : undefined;
        }, 60_000);
        assertEquals(ew!.gateway.routes()[`${WEB_PORT}.web.${NS}.svc.clusterset.local`].length, 2);
        await waitFor("web's pods answer A's caller", async () => {
          const r = await callIn(a, "caller", CLUSTERSET_NAME, 5);
          return Object.keys(r.counts).every((k) => k === "web" || k === "web-2")
            ? true
            : undefined;
        }, 60_000);
        // Sequential requests ride A's proxy's one upstream connection: the gateway picked one pod
        // for it (balancing behind a gateway is per connection). Figures only.
        const sequential = (await callIn(a, "caller", CLUSTERSET_NAME, 40)).counts;
        // Concurrent callers make A's proxy open more connections: the gateway spreads those.
        const seen: Record<string, number> = {};
        await waitFor("both of web's pods answer through the gateway", async () => {
          const runs = await Promise.all(
            [0, 1, 2, 3].map(() => callIn(a, "caller", CLUSTERSET_NAME, 10)),
          );
          for (const r of runs) {
            for (const [k, n] of Object.entries(r.counts)) seen[k] = (seen[k] ?? 0) + n;
          }
          return seen.web && seen["web-2"] ? true : undefined;
        }, 60_000);
        assertEquals(Object.keys(seen).sort(), ["web", "web-2"], JSON.stringify(seen));
        figures.twoPods = { weight, sequential, concurrent: seen };
      },
    );
    console.log(`mcs east-west routes figures: ${JSON.stringify(figures)}`);
  } finally {
    await ew?.close();
    await scene.close();
  }
});
