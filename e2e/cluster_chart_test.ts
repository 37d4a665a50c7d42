/**
 * aether installed with its Helm chart on the local cluster: aether's image imported (no
 * registry) → `helm install charts/aether` → the controller Deployment and the node-agent DaemonSet
 * Ready from that image → the controller accepts the GatewayClass, the quickstart's Gateway and
 * HTTPRoute (backends: real echo-basic pods) → the Gateway's edge gets an address from the local
 * cluster's LoadBalancer (MetalLB) and serves the quickstart's routing there, reached from the host.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { imageNames, withCluster } from "../testbed/cluster/mod.ts";
import { uninstallAether } from "../testbed/conformance/mod.ts";
import { ensurePeer, projectRoot } from "../testbed/peers/mod.ts";
import { request } from "./http_client.ts";
import { echoApp } from "./cluster_fixtures.ts";
import { condition, helm, installChart, release, waitFor } from "./cluster_ha.ts";
import { kubectl, rollout } from "./kubectl.ts";

const edgeLabel = "app.kubernetes.io/name=aether-edge";
const ns = "aether-system";
const quickstart = join(projectRoot, "examples", "quickstart");

/** The quickstart's two backends as real echo-basic pods behind Services of the same names. */
const backends = (echo: string) =>
  ["echo-v1", "echo-v2"].map((name) => echoApp({ name, namespace: "default", image: echo }))
    .join("---\n");

/** The quickstart's Gateway and HTTPRoute (its GatewayClass is the chart's). */
async function quickstartGatewayAndRoute(): Promise<string> {
  const docs = [];
  for (const file of ["gateway.yaml", "route.yaml"]) {
    const text = await Deno.readTextFile(join(quickstart, file));
    for (const d of parseAllDocuments(text)) {
      if (d.get("kind") !== "GatewayClass") docs.push(d.toString());
    }
  }
  return docs.join("---\n");
}

type Condition = { type: string; status: string; reason?: string; observedGeneration?: number };

Deno.test({
  name:
    "helm chart on the local cluster: controller + node agents Ready, quickstart through the edge",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await ensurePeer("helm");
    await ensurePeer("kubectl");
    await withCluster(async (c) => {
      const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, stdin);
      const json = async (args: string[]) => JSON.parse(await k([...args, "-o", "json"]));
      const podsOf = (selector: string) => json(["-n", ns, "get", "pods", "-l", selector]);
      const started = Date.now();
      await c.importImage("aether");
      const imported = Date.now();
      try {
        // A run killed before its clean-up (or the conformance run) left its release or edges.
        await uninstallAether(c.kubeconfig);
        await k(["apply", "-f", "-"], backends(imageNames.echoBasic));
        // The chart's defaults: identity on (installChart turns it off for the other tests).
        await installChart(c, ["identity.enabled=true"]);

        await rollout(c.kubeconfig, ns, "statefulset/spire-server");
        await rollout(c.kubeconfig, ns, "daemonset/spire-agent");
        await rollout(c.kubeconfig, ns, "deployment/aether-controller");
        await rollout(c.kubeconfig, ns, "daemonset/aether-node-proxy");
        // The node agent is on the node's network: its admin server answers on the node address.
        await rollout(c.kubeconfig, ns, "daemonset/aether-agent", {
          more: async () => {
            const admin = (path: string) =>
              request({ host: c.layout.nodeIp, port: 15000, path, timeoutMs: 5000 })
                .then((r) => `--- agent ${path} (${r.status})\n${r.body}`);
            return `${await admin("/readyz")}\n${await admin("/debug/xds")}`;
          },
        });
        for (const component of ["controller", "agent", "node-proxy"]) {
          const pods = await podsOf(`app.kubernetes.io/component=${component}`);
          assert.ok(pods.items.length >= 1, `a ${component} pod`);
          for (const pod of pods.items) {
            assert.equal(pod.spec.containers[0].image, imageNames.aether);
            assert.equal(condition(pod.status.conditions, "Ready")?.status, "True");
          }
        }
        console.log(
          `import ${imported - started} ms, helm install → controller + agents Ready ${
            Date.now() - imported
          } ms`,
        );

        await k(["rollout", "status", "deployment/echo-v1", "--timeout=180s"]);
        await k(["rollout", "status", "deployment/echo-v2", "--timeout=180s"]);
        await k(["apply", "-f", "-"], await quickstartGatewayAndRoute());

        const gc = await waitFor("GatewayClass Accepted", async () => {
          const o = await json(["get", "gatewayclass", "aether"]);
          return condition(o.status?.conditions, "Accepted")?.status === "True" ? o : undefined;
        });
        assert.ok(gc.status.supportedFeatures?.length > 0, "supportedFeatures reported");
        // The edge Service gets an address from the local cluster's LoadBalancer (MetalLB's
        // controller, testbed/cluster/metallb.ts); it becomes the Gateway's, and the Gateway Programmed.
        const gw = await waitFor("Gateway Programmed with an address", async () => {
          const o = await json(["get", "gateway", "demo"]);
          const programmed = condition(o.status?.conditions, "Programmed")?.status === "True";
          return programmed && o.status?.addresses?.length ? o : undefined;
        });
        assert.equal(
          gw.status.conditions.find((c: Condition) => c.type === "Accepted").observedGeneration,
          gw.metadata.generation,
        );
        const address: string = gw.status.addresses[0].value;
        assert.ok(address.startsWith(c.layout.lbCidr.replace(/0\/24$/, "")), `${address} in pool`);
        await waitFor("HTTPRoute Accepted by aether", async () => {
          const o = await json(["get", "httproute", "echo"]);
          const parent = o.status?.parents?.find((p: { controllerName: string }) =>
            p.controllerName === "gateway.aether.io/edge"
          );
          return condition(parent?.conditions, "Accepted")?.status === "True" ? o : undefined;
        });

        // The Gateway's edge: a Deployment of the edge agent + Envoy from aether's image.
        const edge = await waitFor("the edge pod Ready", async () => {
          const pods = await podsOf("gateway.aether.io/gateway");
          return pods.items.find((p: { status: { conditions?: Condition[] } }) =>
            condition(p.status.conditions, "Ready")?.status === "True"
          );
        });
        assert.equal(edge.spec.containers[0].image, imageNames.aether);
        const get = (authority: string, headers: Record<string, string> = {}) =>
          request({ host: address, port: 18080, authority, headers, timeoutMs: 10_000 });
        const pod = (r: { json?: Record<string, unknown> }) => String(r.json?.pod);
        const canary = await waitFor("x-canary: always → echo-v2", async () => {
          const r = await get("echo.example.com", { "x-canary": "always" });
          return r.status === 200 ? r : undefined;
        }, 120_000);
        assert.match(pod(canary), /^echo-v2-/);
        const seen = new Map<string, number>();
        for (let i = 0; i < 40; i++) {
          const r = await get("echo.example.com");
          assert.equal(r.status, 200);
          const app = pod(r).replace(/-[^-]+-[^-]+$/, "");
          seen.set(app, (seen.get(app) ?? 0) + 1);
        }
        assert.ok((seen.get("echo-v1") ?? 0) > (seen.get("echo-v2") ?? 0), `90/10: ${[...seen]}`);
        assert.equal((await get("other.example.com")).status, 404, "a hostname no route has");
        // The edge → pod hop is SPIFFE mTLS with the edge's own SVID: the pod's proxy hands the
        // app XFCC naming the pod's identity and the edge's.
        const echoed = (await get("echo.example.com")).json?.headers as Record<string, unknown>;
        const xfcc = String(
          [
            Object.entries(echoed ?? {}).find(([h]) =>
              h.toLowerCase() === "x-forwarded-client-cert"
            )
              ?.[1],
          ].flat()[0],
        );
        assert.match(
          xfcc,
          /^By=spiffe:\/\/cluster\.local\/ns\/default\/sa\/default;Hash=[0-9a-f]+;URI=spiffe:\/\/cluster\.local\/ns\/aether-system\/sa\/aether-edge$/,
        );

        // helm uninstall with the Gateway still there: the GatewayClass goes with the release and
        // its edges (which it owns) go with it, not left running on a deleted ServiceAccount.
        const edgeObjects = () => json(["-n", ns, "get", "deployments,services", "-l", edgeLabel]);
        const owners = (await edgeObjects()).items.map((
          o: { metadata: { ownerReferences?: [] } },
        ) =>
          o.metadata.ownerReferences?.map((r: { kind: string; name: string }) =>
            `${r.kind}/${r.name}`
          )
        );
        assert.deepEqual(owners, [["GatewayClass/aether"], ["GatewayClass/aether"]]);
        await helm(c, ["uninstall", release, "--wait"]);
        await waitFor(
          "the edge Deployment and Service garbage-collected",
          async () => (await edgeObjects()).items.length === 0 ? true : undefined,
        );
        // Nothing of SPIRE is left either.
        const spireLeft = [
          ...(await json([
            "-n",
            ns,
            "get",
            "statefulsets,daemonsets,services,configmaps,serviceaccounts",
          ]))
            .items,
          ...(await json(["get", "clusterroles,clusterrolebindings"])).items,
        ].map((o: { kind: string; metadata: { name: string } }) => `${o.kind}/${o.metadata.name}`)
          .filter((n: string) => /spire/.test(n));
        assert.deepEqual(spireLeft, [], "SPIRE objects left after uninstall");
      } finally {
        await k(["delete", "--ignore-not-found", "-f", "-"], await quickstartGatewayAndRoute())
          .catch(() => {});
        // The release and the edges its controller made (helm does not know them).
        await uninstallAether(c.kubeconfig).catch((e) => console.error(`uninstall: ${e}`));
        await k(
          ["delete", "--ignore-not-found", "--wait=false", "-f", "-"],
          backends(imageNames.echoBasic),
        )
          .catch(() => {});
      }
    });
  },
});
