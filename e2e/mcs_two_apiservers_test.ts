/**
 * Issue 20 acceptance on two clusters that each have their own API server (item 7,
 * e2e/mcs_kube_clusters.ts: real etcd, kube-apiserver, controller-manager, scheduler per cluster,
 * a kwok node, process pods in network namespaces, aether's controller and node agent reading the
 * API server). `web` — a Deployment of echo-basic, its Service and a ServiceExport — is created in
 * B's API server only. A process pod in A calls `web.shop.svc.clusterset.local` (A's DNS answers
 * the VIP of the ServiceImport A's MCS controller made; A's node proxy captures the call) and a
 * Service `front` whose HTTPRoute (in A's API server) has the ServiceImport as backendRef: B's pod
 * answers both over SPIFFE mTLS, XFCC carrying B's pod's ID (By=) and the caller's (URI=).
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { waitFor } from "./peers/proc.ts";
import { type KubeMcsCluster, startKubeMcsClusters } from "./mcs_kube_clusters.ts";
import { ECHO_HTTP_PORT, ECHO_IMAGE, PAUSE_IMAGE } from "./pod_images.ts";

const NS = "shop";
const MCS = "/apis/multicluster.x-k8s.io/v1beta1";
const GW = "/apis/gateway.networking.k8s.io/v1";
const HTTP = { name: "http", protocol: "TCP", port: 8080, appProtocol: "http" };

interface CallResult {
  addresses: string[];
  counts: Record<string, number>;
  first: { status: number; headers?: Record<string, string> };
}

/** Runs e2e/mcs_client.ts in `cluster`'s running pod `name` (as `kubectl exec` would). */
async function call(cluster: KubeMcsCluster, pod: string, name: string, count = 1) {
  const running = cluster.runner.pod(NS, pod);
  if (!running) throw new Error(`pod ${NS}/${pod} is not running in ${cluster.name}`);
  const out = await new Deno.Command(await ensurePeer("ip"), {
    args: ["netns", "exec", running.netns.netns, Deno.execPath(), "run", "-A"]
      .concat([
        "e2e/mcs_client.ts",
        "--name",
        name,
        "--dns",
        `${cluster.dns.ip}:${cluster.dns.port}`,
      ])
      .concat(["--count", String(count)]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`mcs_client: ${new TextDecoder().decode(out.stderr)}`);
  const text = new TextDecoder().decode(out.stdout).trim();
  return JSON.parse(text.split("\n").pop()!) as CallResult;
}

const webDeployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: NS },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        serviceAccountName: "web",
        containers: [{
          name: "echo",
          image: ECHO_IMAGE,
          env: [
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            { name: "NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
            { name: "SERVICE_NAME", value: "web" },
          ],
        }],
      },
    },
  },
};

const pod = (name: string, sa: string, image: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: NS },
  spec: { serviceAccountName: sa, containers: [{ name: "main", image }] },
});

Deno.test("mcs e2e: two API servers; web created in B only answers A's pod over mTLS", async (t) => {
  const scene = await startKubeMcsClusters({ serviceAccounts: { [NS]: ["web", "caller"] } });
  const { a, b, spire } = scene;
  const td = spire.trustDomain;
  const step = (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      try {
        await fn();
      } catch (e) {
        console.error(
          `step "${name}" failed; the last log lines:\n${scene.logs.slice(-80).join("\n")}`,
        );
        throw e;
      }
    });
  try {
    let webPod = "", vip = "", frontIp = "";
    await step("B's API server: web's Deployment, Service and ServiceExport", async () => {
      await b.create(`/apis/apps/v1/namespaces/${NS}/deployments`, webDeployment);
      await b.create(`/api/v1/namespaces/${NS}/services`, {
        metadata: { name: "web", namespace: NS },
        spec: { selector: { app: "web" }, ports: [{ ...HTTP, targetPort: ECHO_HTTP_PORT }] },
      });
      await b.create(`${MCS}/namespaces/${NS}/serviceexports`, {
        apiVersion: "multicluster.x-k8s.io/v1beta1",
        kind: "ServiceExport",
        metadata: { name: "web", namespace: NS },
      });
      webPod = await waitFor("web's pod running on B's kwok node", () => {
        const p = b.runner.pods().find((x) => x.name.startsWith("web-"));
        return Promise.resolve(p?.name);
      }, 90_000);
      // kwok's IP for it, from B's node podCIDR: on B's bridge.
      const ip = b.runner.pod(NS, webPod)!.ip;
      assert(ip.startsWith(b.net.subnet.replace(/0\/24$/, "")), `${ip} not in ${b.net.subnet}`);
    });
    await step(
      "A's API server: the ServiceImport, front's HTTPRoute to it, the caller pod",
      async () => {
        const si = await waitFor("ServiceImport web in A with a VIP", async () => {
          const r = await a.kwok.kube.request("GET", `${MCS}/namespaces/${NS}/serviceimports/web`);
          return r.json?.spec?.ips?.length ? r.json : undefined;
        }, 60_000);
        vip = si.spec.ips[0];
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
        await a.create(`/api/v1/namespaces/${NS}/pods`, pod("caller", "caller", PAUSE_IMAGE));
        await waitFor(
          "caller running in A",
          () => Promise.resolve(a.runner.pod(NS, "caller")),
          90_000,
        );
      },
    );
    const xfccOk = (r: CallResult) => {
      const xfcc = r.first.headers?.["x-forwarded-client-cert"] ?? "";
      assert(xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`), xfcc);
      assert(xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`), xfcc);
    };
    await step("web.shop.svc.clusterset.local from A's pod: answered by B's pod", async () => {
      const name = `web.${NS}.svc.clusterset.local`;
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
        }, 60_000);
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
        }, 60_000);
        assertEquals(event.type, "Warning");
        assert(event.message.includes("not on the allowlist"), event.message);
        assertEquals(b.runner.pod(NS, "stray"), undefined);
        assert(b.runner.refused().get(`${NS}/stray`)?.includes("not on the allowlist"));
        const r = await call(a, "caller", `web.${NS}.svc.clusterset.local`, 3);
        assertEquals(r.counts, { [webPod]: 3 });
      },
    );
  } finally {
    await scene.close();
  }
});
