/**
 * Issue 20 acceptance on two clusters that each have their own API server (item 7,
 * e2e/mcs_kube_clusters.ts: real etcd, kube-apiserver, controller-manager, scheduler per cluster,
 * a kwok node, process pods in network namespaces, aether's controller and node agent reading the
 * API server). `web` — a Deployment of echo-basic, its Service and a ServiceExport — is created in
 * B's API server only. A process pod in A calls `web.shop.svc.clusterset.local` (A's DNS answers
 * the VIP of the ServiceImport A's MCS controller made; A's node proxy captures the call) and a
 * Service `front` whose HTTPRoute (in A's API server) has the ServiceImport as backendRef: B's pod
 * answers both over SPIFFE mTLS, XFCC carrying B's pod's ID (By=) and the caller's (URI=). A pod
 * with an image off the allowlist is refused with an Event; B's pod deleted, the Deployment's new
 * pod answers.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { waitFor } from "./peers/proc.ts";
import { startKubeMcsClusters } from "./mcs_kube_clusters.ts";
import {
  call,
  type CallResult,
  exportWeb,
  HTTP,
  importVip,
  NS,
  pod,
  startCaller,
  stepWithLogs,
  WEB_CLUSTERSET,
} from "./mcs_kube_scene.ts";

const GW = "/apis/gateway.networking.k8s.io/v1";

Deno.test("mcs e2e: two API servers; web created in B only answers A's pod over mTLS", async (t) => {
  const scene = await startKubeMcsClusters({ serviceAccounts: { [NS]: ["web", "caller"] } });
  const { a, b, spire } = scene;
  const td = spire.trustDomain;
  const step = stepWithLogs(t, scene.logs);
  try {
    let webPod = "", vip = "", frontIp = "";
    await step("B's API server: web's Deployment, Service and ServiceExport", async () => {
      webPod = await exportWeb(b);
      // kwok's IP for it, from B's node podCIDR: on B's bridge.
      const ip = b.runner.pod(NS, webPod)!.ip;
      assert(ip.startsWith(b.net.subnet.replace(/0\/24$/, "")), `${ip} not in ${b.net.subnet}`);
    });
    await step(
      "A's API server: the ServiceImport, front's HTTPRoute to it, the caller pod",
      async () => {
        vip = await importVip(a);
        const noWeb = await a.kwok.kube.request("GET", `/api/v1/namespaces/${NS}/services/web`);
        assertEquals(noWeb.status, 404, "web exists in B only");
        const front = await a.create(`/api/v1/namespaces/${NS}/services`, {
          metadata: { name: "front", namespace: NS },
          spec: { ports: [HTTP] },
        }) as { spec: { clusterIP: string } };
        frontIp = front.spec.clusterIP;
        await a.create(`${GW}/namespaces/${NS}/httproutes`, {
          apiVersion: "gateway.networking.k8s.io/v1",
          kind: "HTTPRoute",
          metadata: { name: "front", namespace: NS },
          spec: {
            parentRefs: [{ group: "", kind: "Service", name: "front", port: HTTP.port }],
            rules: [{
              backendRefs: [{
                group: "multicluster.x-k8s.io",
                kind: "ServiceImport",
                name: "web",
                port: HTTP.port,
              }],
            }],
          },
        });
        await startCaller(a);
      },
    );
    const xfccOk = (r: CallResult) => {
      const xfcc = r.first.headers?.["x-forwarded-client-cert"] ?? "";
      assert(xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`), xfcc);
      assert(xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`), xfcc);
    };
    await step("web.shop.svc.clusterset.local from A's pod: answered by B's pod", async () => {
      const name = WEB_CLUSTERSET;
      await waitFor("B's web answers A's caller", async () => {
        const r = await call(a, "caller", name);
        return r.counts[webPod] === 1 ? true : undefined;
      }, 120_000);
      const r = await call(a, "caller", name, 10);
      assertEquals(r.addresses, [vip]);
      assertEquals(r.counts, { [webPod]: 10 });
      xfccOk(r);
    });
    await step(
      "front's HTTPRoute backendRef to the ServiceImport: answered by B's pod",
      async () => {
        const r = await waitFor("front routes to B's web", async () => {
          const r = await call(a, "caller", "front.aether.internal", 10);
          return r.counts[webPod] === 10 ? r : undefined;
        }, 120_000);
        assertEquals(r.addresses, [frontIp]);
        xfccOk(r);
      },
    );
    await step(
      "a pod with an image off the allowlist: a Warning Event, the others run on",
      async () => {
        await b.create(
          `/api/v1/namespaces/${NS}/pods`,
          pod("stray", "web", "docker.io/library/nginx:1"),
        );
        const event = await waitFor("the stray pod's Event", async () => {
          const r = await b.kwok.kube.request(
            "GET",
            `/api/v1/namespaces/${NS}/events?fieldSelector=involvedObject.name%3Dstray`,
          );
          return r.json?.items?.find((e: { reason: string }) => e.reason === "Failed");
        }, 120_000);
        assertEquals(event.type, "Warning");
        assert(event.message.includes("not on the allowlist"), event.message);
        assertEquals(b.runner.pod(NS, "stray"), undefined);
        assert(b.runner.refused().get(`${NS}/stray`)?.includes("not on the allowlist"));
        const r = await call(a, "caller", WEB_CLUSTERSET, 3);
        assertEquals(r.counts, { [webPod]: 3 });
      },
    );
    await step("B's pod deleted: the Deployment's new pod answers A's caller", async () => {
      const del = await b.kwok.kube.request("DELETE", `/api/v1/namespaces/${NS}/pods/${webPod}`);
      assert(del.status < 300, JSON.stringify(del.json));
      // B's ReplicaSet, scheduler and kwok, the pod runner, B's registrar, A's node proxy.
      const next = await waitFor("a new web pod answering A's caller", async () => {
        const name = Object.keys((await call(a, "caller", WEB_CLUSTERSET)).counts)[0];
        return name?.startsWith("web-") && name !== webPod ? name : undefined;
      }, 120_000);
      const r = await call(a, "caller", WEB_CLUSTERSET, 10);
      assertEquals(r.counts, { [next]: 10 });
      assertEquals(b.runner.pod(NS, webPod), undefined);
    });
  } finally {
    await scene.close();
  }
});
