/**
 * The SPIRE registrar's ServiceAccount watch on a real kube-apiserver (e2e/peers/kube.ts) feeding
 * a real spire-server (e2e/spire.ts): a ServiceAccount created through the API server gets its
 * entry, a deleted one loses it, an excluded namespace's gets none.
 */
import assert from "node:assert/strict";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import {
  OWNER_HINT,
  Registrar,
  serviceAccountId,
  ServiceAccountWatch,
  SpireEntryClient,
} from "../controller/registrar/mod.ts";
import { startKube } from "./peers/kube.ts";
import { startSpire } from "./spire.ts";
import { waitFor } from "./peers/proc.ts";

const TD = "aether.test";

Deno.test("SPIRE registrar: ServiceAccounts watched on a real API server become SPIRE entries", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-registrar-kube-" });
  const kube = await startKube(dir);
  const spire = await startSpire({ trustDomain: TD });
  const entries = new SpireEntryClient(spire.serverSocket);
  const client = new KubeClient({ kubeconfig: kube.kubeconfig });
  const logs: string[] = [];
  const logger = new Logger("registrar", (l) => logs.push(l), "info");
  const metrics = new Registry();
  const registrar: Registrar = new Registrar({
    connect: () => new SpireEntryClient(spire.serverSocket),
    serviceAccounts: () => watch.list(),
    trustDomain: TD,
    clusterName: "kube",
    svidTtlSeconds: 3600,
    excludeNamespaces: ["kube-system"],
    logger,
    metrics,
    debounceMs: 50,
  });
  const watch = new ServiceAccountWatch({
    client,
    logger,
    metrics,
    onChange: () => registrar.notify(),
  });
  const ours = async () =>
    (await entries.listEntries({ hint: OWNER_HINT })).map((e) => e.spiffeId).sort();
  try {
    const post = async (path: string, body: unknown) => {
      const r = await kube.request("POST", path, body);
      assert.ok(r.status === 201 || r.status === 409, `${path}: ${JSON.stringify(r.json)}`);
    };
    for (const ns of ["shop", "kube-system"]) {
      await post("/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: ns },
      });
    }
    const sa = (ns: string, name: string) =>
      post(`/api/v1/namespaces/${ns}/serviceaccounts`, {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name },
      });
    await sa("shop", "web");
    await sa("kube-system", "coredns");
    registrar.start();
    await watch.start();
    registrar.notify();
    const web = serviceAccountId(TD, "shop", "web");
    await waitFor("shop/web's entry", async () => (await ours()).includes(web) || undefined);
    assert.ok(!(await ours()).includes(serviceAccountId(TD, "kube-system", "coredns")));

    await sa("shop", "api");
    const api = serviceAccountId(TD, "shop", "api");
    await waitFor("shop/api's entry", async () => (await ours()).includes(api) || undefined);

    const del = await kube.request("DELETE", "/api/v1/namespaces/shop/serviceaccounts/web");
    assert.equal(del.status, 200, JSON.stringify(del.json));
    await waitFor("shop/web's entry gone", async () => !(await ours()).includes(web) || undefined);
    // Whatever else the API server holds (a controller-manager would add "default" SAs; this
    // bare API server has none), shop/api and the alias remain.
    assert.ok((await ours()).includes(api));
    assert.equal(registrar.readiness().ready, true);
  } finally {
    await watch.stop();
    await registrar.stop();
    entries.close();
    client.close();
    await spire.stop();
    await kube.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
