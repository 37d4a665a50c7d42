/**
 * Cluster B's side of issue 20 on a real kube-apiserver and a real registry etcd: the MCS
 * controller publishes the producer routes of exported Services (HTTPRoutes whose parentRef is an
 * exported Service of their own namespace) under B's origin, `routes/HTTPRoute/<ns>/<name>`, and
 * removes a record when its route or its Service's export goes. A consumer route (another
 * namespace) and a route of an unexported Service are never published.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { EtcdKv, originPrefix } from "../lib/registry/mod.ts";
import { parseRouteRecord } from "../lib/mcs/mod.ts";
import { McsController } from "../controller/mcs/mod.ts";
import { ensurePeer, projectRoot } from "../testbed/peers/mod.ts";
import { startEtcd } from "./peers/etcd.ts";
import { installCrds, startKube } from "./peers/kube.ts";
import { waitFor } from "./peers/proc.ts";

const MCS = "/apis/multicluster.x-k8s.io/v1beta1";
const ROUTES = "/apis/gateway.networking.k8s.io/v1";
const HTTPROUTE_CRD = join(
  projectRoot,
  "tools/gateway-api/v1.5.1/standard/gateway.networking.k8s.io_httproutes.yaml",
);

// deno-lint-ignore no-explicit-any
type Obj = any;

const service = (ns: string, name: string): Obj => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace: ns },
  spec: { selector: { app: name }, ports: [{ name: "http", protocol: "TCP", port: 8080 }] },
});

const route = (ns: string, name: string, parent: { name: string; namespace?: string }): Obj => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: ns },
  spec: {
    parentRefs: [{ group: "", kind: "Service", port: 8080, ...parent }],
    rules: [{
      backendRefs: [
        { name: "web-v1", namespace: "shop", port: 8080, weight: 90 },
        { name: "web-v2", namespace: "shop", port: 8080, weight: 10 },
      ],
    }],
  },
});

Deno.test("mcs e2e: B's MCS controller publishes producer routes of exported Services", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-mcs-publish-" });
  // The HTTPRoute CRD alone in a folder (installCrds reads folders).
  const routeCrd = join(dir, "crds");
  await Deno.mkdir(routeCrd);
  await Deno.copyFile(HTTPROUTE_CRD, join(routeCrd, "httproutes.yaml"));
  const registry = await startEtcd(join(dir, "registry"));
  const kube = await startKube(join(dir, "b"));
  const client = new KubeClient({ kubeconfig: kube.kubeconfig });
  const kv = new EtcdKv({ url: registry.url });
  const warnings: string[] = [];
  const metrics = new Registry();
  let controller: McsController | undefined;
  const must = async (method: string, path: string, body?: unknown) => {
    const res = await kube.request(method, path, body);
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  };
  const origin = originPrefix({ region: "eu", cluster: "b" });
  /** B's route records in the registry, by key inside the origin. */
  const records = async () =>
    new Map(
      (await kv.range(`${origin}routes/`)).kvs.map((e) => [e.key.slice(origin.length), e.value]),
    );
  const until = (what: string, ok: (keys: string[]) => boolean) =>
    waitFor(what, async () => {
      const keys = [...(await records()).keys()].sort();
      return ok(keys) ? keys : undefined;
    }, 60_000);
  const step = (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      try {
        await fn();
      } catch (e) {
        console.error(`step "${name}" failed; the controller's warnings:\n${warnings.join("\n")}`);
        console.error(`its status: ${JSON.stringify(controller?.status())}`);
        const keys = (await kv.range(origin).catch(() => ({ kvs: [] }))).kvs.map((e) => e.key);
        console.error(`B's registry keys: ${keys.join(" ")}`);
        throw e;
      }
    });
  try {
    await installCrds(kube, join(await ensurePeer("mcs-api-crds"), "crds"));
    await installCrds(kube, routeCrd);
    for (const ns of ["shop", "c"]) {
      await must("POST", "/api/v1/namespaces", { metadata: { name: ns } });
    }
    for (const name of ["web", "web-v1", "web-v2", "internal"]) {
      await must("POST", "/api/v1/namespaces/shop/services", service("shop", name));
    }
    for (const name of ["web", "web-v1", "web-v2"]) {
      await must("POST", `${MCS}/namespaces/shop/serviceexports`, {
        apiVersion: "multicluster.x-k8s.io/v1beta1",
        kind: "ServiceExport",
        metadata: { name, namespace: "shop" },
      });
    }
    await must(
      "POST",
      `${ROUTES}/namespaces/shop/httproutes`,
      route("shop", "canary", { name: "web" }),
    );
    // Not producer routes of an exported Service: never published.
    await must(
      "POST",
      `${ROUTES}/namespaces/shop/httproutes`,
      route("shop", "inside", { name: "internal" }),
    );
    await must(
      "POST",
      `${ROUTES}/namespaces/c/httproutes`,
      route("c", "mine", { name: "web", namespace: "shop" }),
    );
    controller = new McsController({
      client,
      kv,
      origin: { region: "eu", cluster: "b" },
      identity: "controller-b",
      ttlSeconds: 10,
      isLeader: () => true,
      logger: new Logger("mcs-b", (line) => warnings.push(line), "warn"),
      metrics,
    });
    await controller.start();

    await step("the producer route of the exported Service is published", async () => {
      await until(
        "routes/HTTPRoute/shop/canary",
        (k) => k.includes("routes/HTTPRoute/shop/canary"),
      );
      const all = await records();
      assert.deepEqual([...all.keys()], ["routes/HTTPRoute/shop/canary"]);
      const r = parseRouteRecord(all.get("routes/HTTPRoute/shop/canary")!);
      assert.ok(r, "the record reads back");
      assert.equal(r.cluster, "b.eu");
      assert.deepEqual(r.parents, [{ name: "web", port: 8080 }]);
      assert.ok(r.created, "creationTimestamp carried");
      const weights = (r.rules[0].backendRefs as Obj[]).map((b) => [b.name, b.weight]);
      assert.deepEqual(weights, [["web-v1", 90], ["web-v2", 10]]);
      assert.match(metrics.render(), /aether_mcs_producer_routes 1\b/);
    });

    await step("its Service unexported: the record goes; exported again: back", async () => {
      await must("DELETE", `${MCS}/namespaces/shop/serviceexports/web`);
      await until("no route record", (k) => k.length === 0);
      await must("POST", `${MCS}/namespaces/shop/serviceexports`, {
        apiVersion: "multicluster.x-k8s.io/v1beta1",
        kind: "ServiceExport",
        metadata: { name: "web", namespace: "shop" },
      });
      await until("the record back", (k) => k.join() === "routes/HTTPRoute/shop/canary");
    });

    await step("the route deleted: the record goes", async () => {
      await must("DELETE", `${ROUTES}/namespaces/shop/httproutes/canary`);
      await until("no route record", (k) => k.length === 0);
      assert.match(metrics.render(), /aether_mcs_producer_routes 0\b/);
    });
  } finally {
    await controller?.stop();
    client.close();
    await kube.stop();
    await registry.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
