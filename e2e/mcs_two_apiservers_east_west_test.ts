/**
 * Issue 20 item 7's east-west mode on two clusters with their own API servers
 * (e2e/mcs_kube_clusters.ts): B runs its east-west gateway as a pod on its bridge and its
 * controller publishes that address on every endpoint record; the host then routes only the
 * gateway's address of B's pod CIDR to A's pods, and the host itself (where A's node proxy runs
 * beside B's) reaches no B pod's mesh port 15008 but the gateway's. `web`, created in B's API
 * server only,
 * answers A's caller by its clusterset name through the gateway, TLS end to end (XFCC: B's pod's
 * ID and the caller's), while direct dials to B's pod fail.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { EtcdKv } from "../lib/registry/mod.ts";
import { waitFor } from "./peers/proc.ts";
import { KUBE_REGION, startKubeMcsClusters } from "./mcs_kube_clusters.ts";
import {
  call,
  exportWeb,
  importVip,
  NS,
  startCaller,
  stepWithLogs,
  WEB_CLUSTERSET,
} from "./mcs_kube_scene.ts";
import { onlyGatewayRouted } from "./east_west_pod.ts";
import { dials, GATEWAY_PORT } from "./mcs_east_west_scene.ts";
import { ECHO_HTTP_PORT } from "./pod_images.ts";

Deno.test("mcs e2e: two API servers, east-west mode — A reaches B's web only through B's gateway", async (t) => {
  const scene = await startKubeMcsClusters({
    serviceAccounts: { [NS]: ["web", "caller"] },
    gateways: ["b"],
  });
  const { a, b, spire } = scene;
  const gw = b.gateway!;
  const td = spire.trustDomain;
  const step = stepWithLogs(t, scene.logs);
  let unroute: (() => Promise<void>) | undefined;
  try {
    let webPod = "", webIp = "", vip = "";
    await step("only B's gateway address is routed", async () => {
      unroute = await onlyGatewayRouted(
        `aether_ew_${crypto.randomUUID().slice(0, 8)}`,
        b.net.subnet,
        gw.pod.ip,
        a.net.subnet,
      );
    });
    await step("web in B's API server; its records carry B's gateway", async () => {
      webPod = await exportWeb(b);
      webIp = b.runner.pod(NS, webPod)!.ip;
      const kv = new EtcdKv({ url: scene.registry.url, timeoutMs: 5000 });
      const prefix = `/aether/v1/${KUBE_REGION}/b/eps/${NS}/web/`;
      const record = await waitFor("web's endpoint record", async () => {
        const kvs = (await kv.range(prefix)).kvs;
        return kvs.length ? JSON.parse(kvs[0].value) : undefined;
      }, 120_000);
      assertEquals(record.gateway, gw.address, JSON.stringify(record));
      vip = await importVip(a);
      await startCaller(a);
    });
    await step("no direct path: A's pod and the host cannot dial B's pod", async () => {
      const caller = a.runner.pod(NS, "caller")!.netns.netns;
      assert(!await dials(webIp, 15008, caller), "A's pod must not reach B's pod:15008");
      assert(!await dials(webIp, ECHO_HTTP_PORT, caller), "A's pod must not reach B's pod:3000");
      assert(!await dials(webIp, 15008), "the host (A's node proxy) must not reach B's pod:15008");
      assert(await dials(webIp, 15008, gw.pod.netns), "B's gateway pod reaches it");
    });
    await step("A's caller is answered by B's pod through B's gateway, same XFCC", async () => {
      await waitFor("B's web answers A's caller through the gateway", async () => {
        const r = await call(a, "caller", WEB_CLUSTERSET);
        if (r.counts[webPod] === 1) return true;
        throw new Error(
          `${JSON.stringify(r.counts)}; B's gateway: ${JSON.stringify(gw.runtime.routes())}`,
        );
      }, 120_000);
      assert(await dials(gw.pod.ip, GATEWAY_PORT), "the host dials B's gateway");
      const r = await call(a, "caller", WEB_CLUSTERSET, 10);
      assertEquals(r.addresses, [vip]);
      assertEquals(r.counts, { [webPod]: 10 });
      const xfcc = r.first.headers?.["x-forwarded-client-cert"] ?? "";
      assert(xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`), xfcc);
      assert(xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`), xfcc);
      const stats = await gw.runtime.envoy!.admin("/stats?filter=east_west_");
      const cx = /east_west_[0-9a-z_]*\.downstream_cx_total: (\d+)/.exec(stats);
      assert(cx && Number(cx[1]) >= 1, stats);
    });
  } finally {
    await unroute?.();
    await scene.close();
  }
});
