/**
 * Issue 20 on the real local cluster: the kubelet cluster is cluster `a` of a clusterset, installed
 * by aether's chart (identity with SPIRE, transparent capture, multicluster on a registry etcd that
 * listens on the host's address towards the node); a second cluster `b` with its own API server
 * (e2e/mcs_kube_clusters.ts: kwok node, process pods on its own bridge, aether's controller and
 * node agent as processes, its own SPIRE) runs beside it. Both SPIRE servers' CAs are signed by one
 * upstream CA (the chart's identity.spire.server.upstreamCaSecret), so each trusts the other's SVIDs:
 * one trust domain, flat pod routing through the host.
 *
 * `web` is created and exported in b only; an unmodified busybox pod in a calls
 * `web.shop.svc.clusterset.local` (a's node agent answers the ServiceImport's VIP, a's node proxy
 * captures the call) and gets b's pod's answer over SPIFFE mTLS, XFCC naming b's pod (By=) and the
 * caller (URI=); an HTTPRoute in a with the ServiceImport as backendRef does the same. Exported in
 * a too, a's own pod answers (this cluster's endpoints first); a's Deployment scaled to 0, b's pod
 * answers again. The other way: a's web back, b's scaled to 0, a process pod in b is answered by a's
 * kubelet pod (b's node proxy trusts a's SVIDs; a's registrar, in the cluster, published the pod).
 * Last, the registry etcd stopped for 30 s: b's pod keeps being answered by a's, a's node agent says
 * the registry is away on /metrics, no aether pod of a restarts, a change made after it (b's
 * web back) is served, and new exports made after it reach the other cluster both ways.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { imageNames, withCluster } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { type CaptureEnv, installCapture, nodeAgentText, wgetEcho } from "./cluster_capture.ts";
import { releaseNs, waitFor } from "./cluster_ha.ts";
import { kubectl, rollout } from "./kubectl.ts";
import { echoApp } from "./cluster_fixtures.ts";
import { startEtcd } from "./peers/etcd.ts";
import { startSpire } from "./spire.ts";
import { type KubeMcsCluster, startKubeMcsCluster } from "./mcs_kube_clusters.ts";
import { call, exportWeb, HTTP, MCS, NS, startCaller, WEB_CLUSTERSET } from "./mcs_kube_scene.ts";

const TD = "cluster.local";
const CA_SECRET = "clusterset-ca";
const re = (s: string) => s.replaceAll(".", "\\.");

Deno.test({
  name: "local cluster, multi-cluster: b's export answers a's captured pod over mTLS",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await withCluster(async (c) => {
      const root = await Deno.makeTempDir({ prefix: "aether-cluster-mcs-" });
      const logs: string[] = [];
      const stops: (() => Promise<void>)[] = [];
      const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, stdin);
      /** The VIP of ServiceImport `name` in a (undefined: none yet). */
      const importVipInA = async (name: string) =>
        JSON.parse(
          await k(["-n", NS, "get", "serviceimports.multicluster.x-k8s.io", name, "-o", "json"])
            .catch(() => "{}"),
        ).spec?.ips?.[0] as string | undefined;
      const crds = join(await ensurePeer("mcs-api-crds"), "crds");
      // The SPIRE server's data of this run only: a CA persisted by another test is not reused.
      const spireData = `/var/lib/aether/spire-server-mcs-${crypto.randomUUID().slice(0, 6)}`;
      let cleanup = async () => {};
      const ctx: { env?: CaptureEnv; b?: KubeMcsCluster } = {};
      // Each step needs the ones before it: the first to fail ends the test.
      const step = async (name: string, fn: () => Promise<void>) => {
        const ok = await t.step(name, async () => {
          try {
            await fn();
          } catch (e) {
            console.error(
              `step "${name}" failed; b's last log lines:\n${logs.slice(-60).join("\n")}`,
            );
            throw e;
          }
        });
        if (!ok) throw new Error(`step "${name}" failed (see above); the rest needs it`);
      };
      try {
        // b's SPIRE makes the upstream CA; a's SPIRE server gets it as a Secret.
        const spire = await startSpire({ trustDomain: TD, upstreamCa: true });
        stops.push(() => spire.stop());
        await spire.registerPod(NS, "web");
        await spire.registerPod(NS, "caller");
        // The registry on the host's side of the node's veth: a's pods and node reach it.
        const registry = await startEtcd(join(root, "registry"), "registry", c.layout.hostIp);
        stops.push(() => registry.stop());

        await step("a: the MCS CRDs, the shared CA's Secret, aether's chart", async () => {
          await k(["apply", "-f", crds]);
          await k(["create", "namespace", releaseNs, "--dry-run=client", "-o", "yaml"])
            .then((y) => k(["apply", "-f", "-"], y));
          await k(["-n", releaseNs, "delete", "secret", CA_SECRET, "--ignore-not-found"]);
          await k([
            "-n",
            releaseNs,
            "create",
            "secret",
            "tls",
            CA_SECRET,
            `--cert=${join(spire.dir, "ca.pem")}`,
            `--key=${join(spire.dir, "ca.key")}`,
          ]);
          const env = await installCapture(c, [
            "identity.enabled=true",
            `identity.spire.server.upstreamCaSecret=${CA_SECRET}`,
            `identity.spire.server.persistence.hostPath=${spireData}`,
            `multicluster.registryUrl=${registry.url}`,
            "multicluster.region=eu",
            "multicluster.cluster=a",
          ]);
          cleanup = async () => {
            await k(["delete", "namespace", NS, "--ignore-not-found", "--wait=false"]);
            await env.cleanup();
            await k(["-n", releaseNs, "delete", "secret", CA_SECRET, "--ignore-not-found"]);
            await k(["delete", "-f", crds, "--ignore-not-found"]);
          };
          ctx.env = env;
          // a's pods' trust bundle is the shared root.
          const bundle = JSON.parse(
            await k(["-n", releaseNs, "get", "configmap", "spire-bundle", "-o", "json"]),
          ).data["bundle.crt"] as string;
          const root = (await Deno.readTextFile(join(spire.dir, "ca.pem"))).trim();
          assert.ok(bundle.includes(root.split("\n")[1]), "a's SPIRE bundle holds the shared root");
        });

        await step("b: its own API server, controller, node agent and SPIRE", async () => {
          ctx.b = await startKubeMcsCluster("b", {
            root,
            logs,
            stops,
            registryUrl: registry.url,
            spire,
            serviceAccounts: { [NS]: ["web", "caller"] },
          });
        });
        const b = ctx.b!, env = ctx.env!;
        let webPod = "", aPod = "";

        await step("web exported by b alone → a gets the ServiceImport with a VIP", async () => {
          webPod = await exportWeb(b);
          await k(["create", "namespace", NS]);
          const vip = await waitFor(
            "ServiceImport web in a with a VIP",
            () => importVipInA("web"),
            180_000,
          );
          const range = c.layout.serviceCidr.replace(/\.0\/24$/, ".");
          assert.ok(vip.startsWith(range), `a's clusterset VIP ${vip} is in a's ${range}0/24`);
          const local = await k(["-n", NS, "get", "services", "web", "--ignore-not-found"]);
          assert.equal(local.trim(), "", "no Service web in a: it lives in b only");
        });

        const xfccOk = (h: Record<string, string>) => {
          const by = `spiffe://${TD}/ns/${NS}/sa/web`;
          const uri = `spiffe://${TD}/ns/${env.ns.consumer}/sa/default`;
          assert.match(
            h["x-forwarded-client-cert"] ?? "",
            new RegExp(`By=${re(by)};.*URI=${re(uri)}`),
            JSON.stringify(h),
          );
        };
        await step(`a's captured pod → ${WEB_CLUSTERSET}: b's pod over mTLS`, async () => {
          const url = `http://${WEB_CLUSTERSET}:${HTTP.port}/clusterset`;
          const echoed = await waitFor("b's web answers a's pod", async () => {
            const e = await wgetEcho(env, env.ns.consumer, "client", url).catch(() => undefined);
            return e?.pod === webPod ? e : undefined;
          }, 180_000);
          assert.equal(echoed.namespace, NS);
          xfccOk(echoed.headers);
          for (let i = 0; i < 5; i++) {
            const e = await wgetEcho(env, env.ns.consumer, "client", url);
            assert.equal(e.pod, webPod);
          }
        });

        await step("an HTTPRoute in a with the ServiceImport as backendRef: b's pod", async () => {
          await k(
            ["apply", "-f", "-"],
            `
apiVersion: v1
kind: Service
metadata: {name: front, namespace: ${NS}}
spec: {ports: [{name: http, port: ${HTTP.port}, appProtocol: http}]}
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: front, namespace: ${NS}}
spec:
  parentRefs: [{group: "", kind: Service, name: front, port: ${HTTP.port}}]
  rules:
  - backendRefs: [{group: multicluster.x-k8s.io, kind: ServiceImport, name: web, port: ${HTTP.port}}]
`,
          );
          const url = `http://front.${NS}.svc.cluster.local:${HTTP.port}/front`;
          const echoed = await waitFor("front routes to b's web", async () => {
            const e = await wgetEcho(env, env.ns.consumer, "client", url).catch(() => undefined);
            return e?.pod === webPod ? e : undefined;
          }, 180_000);
          xfccOk(echoed.headers);
        });

        await step("web exported in a too: a's pod first, b's once a's are gone", async () => {
          await k(
            ["apply", "-f", "-"],
            echoApp({ name: "web", namespace: NS, image: imageNames.echoBasic }) + `
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: web, namespace: ${NS}}
`,
          );
          await rollout(c.kubeconfig, NS, "deployment/web");
          const url = `http://${WEB_CLUSTERSET}:${HTTP.port}/locality`;
          const local = await waitFor("a's own web answers a's pod", async () => {
            const e = await wgetEcho(env, env.ns.consumer, "client", url).catch(() => undefined);
            return e && e.pod !== webPod ? e : undefined;
          }, 180_000);
          assert.match(
            local.headers["x-forwarded-client-cert"] ?? "",
            new RegExp(`By=${re(`spiffe://${TD}/ns/${NS}/sa/default`)};`),
          );
          for (let i = 0; i < 5; i++) {
            const e = await wgetEcho(env, env.ns.consumer, "client", url);
            assert.equal(e.pod, local.pod, "this cluster's endpoints first");
          }
          await k(["-n", NS, "scale", "deployment/web", "--replicas=0"]);
          const failed = await waitFor("b's web answers once a's pods are gone", async () => {
            const e = await wgetEcho(env, env.ns.consumer, "client", url).catch(() => undefined);
            return e?.pod === webPod ? e : undefined;
          }, 120_000);
          xfccOk(failed.headers);
        });

        await step(
          "the other way: b's pod reaches a's kubelet pod once b's web is gone",
          async () => {
            await k(["-n", NS, "scale", "deployment/web", "--replicas=1"]);
            await rollout(c.kubeconfig, NS, "deployment/web");
            await startCaller(b);
            const own = await waitFor("b's caller answered by b's web", async () => {
              const r = await call(b, "caller", WEB_CLUSTERSET).catch(() => undefined);
              return r?.counts[webPod] === 1 ? r : undefined;
            }, 120_000);
            assert.deepEqual(own.counts, { [webPod]: 1 }, "b's own endpoints first");
            const scaled = await b.kwok.kube.request(
              "PATCH",
              `/apis/apps/v1/namespaces/${NS}/deployments/web/scale`,
              { spec: { replicas: 0 } },
            );
            assert.ok(scaled.status < 300, JSON.stringify(scaled.json));
            const aPods = JSON.parse(
              await k(["-n", NS, "get", "pods", "-l", "app=web", "-o", "json"]),
            )
              .items.map((p: { metadata: { name: string } }) => p.metadata.name) as string[];
            const r = await waitFor("a's web answers b's caller", async () => {
              const r = await call(b, "caller", WEB_CLUSTERSET, 5).catch(() => undefined);
              const names = Object.keys(r?.counts ?? {});
              return names.length > 0 && names.every((n) => aPods.includes(n)) ? r : undefined;
            }, 120_000);
            aPod = Object.keys(r.counts)[0];
            // b's node proxy checked a's pod's SVID (a's SPIRE, the shared root) and a's its caller's.
            const xfcc = r.first.headers?.["x-forwarded-client-cert"] ?? "";
            assert.match(xfcc, new RegExp(`By=${re(`spiffe://${TD}/ns/${NS}/sa/default`)};`));
            assert.match(xfcc, new RegExp(`URI=${re(`spiffe://${TD}/ns/${NS}/sa/caller`)}`));
          },
        );

        await step(
          "the registry away 30 s: b's pod still reaches a's, nothing restarts",
          async () => {
            const restarts = async () =>
              (JSON.parse(await k(["-n", releaseNs, "get", "pods", "-o", "json"])).items as {
                metadata: { name: string };
                status: { containerStatuses?: { restartCount: number }[] };
              }[]).map((p) =>
                `${p.metadata.name}:${
                  (p.status.containerStatuses ?? []).reduce((n, x) => n + x.restartCount, 0)
                }`
              ).sort();
            const registryUp = async () =>
              /^aether_registry_up (\d)/m.exec(await nodeAgentText(c, "/metrics"))?.[1];
            const before = await restarts();
            await registry.stop();
            let calls = 0;
            try {
              await waitFor(
                "a's node agent says the registry is away",
                async () => await registryUp() === "0" ? true : undefined,
                60_000,
              );
              // b's node proxy keeps the last endpoints it had: a's pod answers every call.
              for (const end = Date.now() + 30_000; Date.now() < end; calls++) {
                const r = await call(b, "caller", WEB_CLUSTERSET);
                assert.deepEqual(Object.keys(r.counts), [aPod], `call ${calls}`);
              }
            } finally {
              await registry.start();
            }
            const back = Date.now();
            await waitFor(
              "a's node agent has the registry back",
              async () => await registryUp() === "1" ? true : undefined,
              60_000,
            );
            assert.ok(calls >= 10, `${calls} calls in 30 s`);
            assert.deepEqual(await restarts(), before, "no aether pod of a restarted");
            // A change after the outage still flows: b's web back → b's caller answered by it.
            const scaled = await b.kwok.kube.request(
              "PATCH",
              `/apis/apps/v1/namespaces/${NS}/deployments/web/scale`,
              { spec: { replicas: 1 } },
            );
            assert.ok(scaled.status < 300, JSON.stringify(scaled.json));
            await waitFor("b's own web answers b's caller again", async () => {
              const r = await call(b, "caller", WEB_CLUSTERSET).catch(() => undefined);
              const name = Object.keys(r?.counts ?? {})[0];
              return name?.startsWith("web-") && name !== aPod ? true : undefined;
            }, 180_000);
            const served = Date.now() - back;
            // New exports after the outage cross both ways: each writer and each mirror is back.
            const t0 = Date.now();
            await b.create(`/api/v1/namespaces/${NS}/services`, {
              metadata: { name: "late-b", namespace: NS },
              spec: { ports: [{ ...HTTP, targetPort: HTTP.port }] },
            });
            await b.create(`${MCS}/namespaces/${NS}/serviceexports`, {
              apiVersion: "multicluster.x-k8s.io/v1beta1",
              kind: "ServiceExport",
              metadata: { name: "late-b", namespace: NS },
            });
            await k(
              ["apply", "-f", "-"],
              `apiVersion: v1
kind: Service
metadata: {name: late-a, namespace: ${NS}}
spec: {ports: [{name: http, port: ${HTTP.port}}]}
---
apiVersion: multicluster.x-k8s.io/v1beta1
kind: ServiceExport
metadata: {name: late-a, namespace: ${NS}}
`,
            );
            const [inA, inB] = await Promise.all([
              waitFor("ServiceImport late-b in a", async () => {
                return await importVipInA("late-b") ? Date.now() - t0 : undefined;
              }, 120_000),
              waitFor("ServiceImport late-a in b", async () => {
                const r = await b.kwok.kube.request(
                  "GET",
                  `${MCS}/namespaces/${NS}/serviceimports/late-a`,
                );
                return r.status === 200 ? Date.now() - t0 : undefined;
              }, 120_000),
            ]);
            console.log(
              `registry away 30 s: ${calls} calls from b's pod, all answered by a's pod; ` +
                `b's new pod served ${served} ms after etcd was back; new exports after it: ` +
                `b → a's ServiceImport in ${inA} ms, a → b's in ${inB} ms`,
            );
          },
        );
      } finally {
        await cleanup().catch((e) => console.error(`clean-up: ${e}`));
        for (const stop of stops.splice(0).reverse()) await stop().catch(() => {});
        await Deno.remove(root, { recursive: true }).catch(() => {});
        await Deno.remove(spireData, { recursive: true }).catch(() => {});
      }
    });
  },
});
