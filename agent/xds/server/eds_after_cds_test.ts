/**
 * EDS follows CDS: a cluster that shares another's ClusterLoadAssignment
 * (`eds_cluster_config.service_name`, as per-caller clusters share their service's) gets it when
 * it is added or updated, though the client already has it. Over a grpc-js client (SotW and
 * delta: the assignment is sent again right after the CDS response) and against a real Envoy
 * 1.40, where such a cluster is otherwise sent nothing and warms only at its initial fetch timeout
 * (15 s, `init_fetch_timeout`) from Envoy's EDS cache.
 */
import assert from "node:assert/strict";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { type NamedResource, Snapshot, SnapshotCache } from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";
import { XdsServer } from "./mod.ts";
import { node, opts, withServer } from "./_ads_client_test_utils.ts";
import {
  edsCluster,
  endpoints,
  freePort,
  get,
  listener,
  routeConfig,
  startBackend,
  startEnvoy,
  waitFor,
} from "./_test_utils.ts";

/** `svc` and its endpoints, plus the given clusters and a route `/<name>` to each. */
function withClusters(port: number, backend: number, extra: NamedResource[]): Snapshot {
  return Snapshot.fromResources({
    listeners: [listener("http", port, "routes")],
    routes: [routeConfig("routes", [
      ...extra.map((c) => ({ prefix: `/${c.name}`, cluster: c.name })),
      { prefix: "/svc", cluster: "svc" },
    ])],
    clusters: [edsCluster("svc"), ...extra],
    endpoints: [endpoints("svc", [backend])],
  });
}

Deno.test({
  name: "sotw and delta: a cluster sharing a known assignment gets it sent again after CDS",
  ...opts,
  fn: () =>
    withServer(async ({ cache, sotw, delta }) => {
      cache.setDefaultSnapshot(withClusters(10000, 9000, []));
      const s = sotw();
      s.send({ node, type_url: TypeUrl.cluster });
      const c1 = await s.next();
      s.send({
        type_url: TypeUrl.cluster,
        version_info: c1.version_info,
        response_nonce: c1.nonce,
      });
      s.send({ type_url: TypeUrl.endpoint, resource_names: ["svc"] });
      const e1 = await s.next();
      assert.equal(e1.resources.length, 1);
      s.send({
        type_url: TypeUrl.endpoint,
        resource_names: ["svc"],
        version_info: e1.version_info,
        response_nonce: e1.nonce,
      });
      const d = delta();
      d.send({ node: { ...node, id: "n2" }, type_url: TypeUrl.cluster });
      const dc1 = await d.next();
      d.send({ type_url: TypeUrl.cluster, response_nonce: dc1.nonce });
      d.send({ type_url: TypeUrl.endpoint, resource_names_subscribe: ["svc"] });
      const de1 = await d.next();
      assert.deepEqual(de1.resources.map((r) => r.name), ["svc"]);
      d.send({ type_url: TypeUrl.endpoint, response_nonce: de1.nonce });
      await s.quiet();
      await d.quiet();

      // A new cluster whose assignment is svc's: CDS, then svc's assignment again.
      cache.setDefaultSnapshot(withClusters(10000, 9000, [edsCluster("svc|caller", "svc")]));
      const c2 = await s.next();
      assert.equal(c2.type_url, TypeUrl.cluster);
      const e2 = await s.next();
      assert.equal(e2.type_url, TypeUrl.endpoint);
      assert.equal(e2.resources.length, 1, "svc's assignment, sent again (SotW)");
      const dc2 = await d.next();
      assert.deepEqual(dc2.resources.map((r) => r.name), ["svc|caller"]);
      const de2 = await d.next();
      assert.equal(de2.type_url, TypeUrl.endpoint);
      assert.deepEqual(de2.resources.map((r) => r.name), ["svc"], "sent again (delta)");
      s.send({
        type_url: TypeUrl.cluster,
        version_info: c2.version_info,
        response_nonce: c2.nonce,
      });
      s.send({
        type_url: TypeUrl.endpoint,
        resource_names: ["svc"],
        version_info: e2.version_info,
        response_nonce: e2.nonce,
      });
      d.send({ type_url: TypeUrl.cluster, response_nonce: dc2.nonce });
      d.send({ type_url: TypeUrl.endpoint, response_nonce: de2.nonce });
      // Once: nothing more until something changes.
      await s.quiet();
      await d.quiet();
    }),
});

/** Envoy's counters of one cluster's EDS subscription. */
async function edsStats(adminUrl: string, cluster: string): Promise<Record<string, number>> {
  const res = await fetch(`${adminUrl}/stats?format=json`);
  const { stats } = await res.json() as { stats: { name?: string; value?: number }[] };
  const prefix = `cluster.${cluster}.`;
  return Object.fromEntries(
    stats.filter((s) => s.name?.startsWith(prefix)).map((s) => [
      s.name!.slice(prefix.length),
      s.value ?? 0,
    ]),
  );
}

async function scenario(delta: boolean): Promise<void> {
  const nodeId = `envoy-eds-${delta ? "delta" : "sotw"}`;
  const a = startBackend("a");
  const port = freePort();
  const cache = new SnapshotCache();
  cache.setDefaultSnapshot(withClusters(port, a.port, []));
  const server = new XdsServer({
    cache,
    logger: new Logger("xds", () => {}),
    metrics: new Registry(),
  });
  const xdsPort = await server.listen({ port: 0 });
  const envoy = await startEnvoy({ nodeId, xdsPort, delta });
  const base = `http://127.0.0.1:${port}`;
  const fail = (e: Error) => assert.fail(`${e.message}\n${envoy.logs()}`);
  try {
    await waitFor("svc served", async () => (await get(`${base}/svc`)).status === 200, 60_000)
      .catch(fail);

    // Added: a cluster sharing svc's assignment serves at once, without the fetch timeout.
    cache.setDefaultSnapshot(withClusters(port, a.port, [edsCluster("caller", "svc")]));
    await waitFor("caller served", async () => (await get(`${base}/caller`)).status === 200)
      .catch(fail);
    const added = await edsStats(envoy.adminUrl, "caller");
    assert.equal(added.init_fetch_timeout, 0, "the added cluster got its assignment");
    assert.equal(added.assignment_use_cached ?? 0, 0, "not from Envoy's EDS cache");

    // Updated: the new version warms at once too.
    cache.setDefaultSnapshot(withClusters(port, a.port, [edsCluster("caller", "svc", 2)]));
    const active = `${envoy.adminUrl}/config_dump?resource=dynamic_active_clusters`;
    await waitFor("the updated caller active", async () => {
      return (await (await fetch(active)).text()).includes('"connect_timeout": "2s"');
    }).catch(fail);
    assert.equal((await get(`${base}/caller`)).status, 200);
    const updated = await edsStats(envoy.adminUrl, "caller");
    assert.equal(updated.init_fetch_timeout, 0, "the updated cluster got its assignment");
  } finally {
    await envoy.stop();
    await server.close();
    await a.close();
  }
}

Deno.test({ name: "eds after cds: SotW, a real Envoy", ...opts, fn: () => scenario(false) });
Deno.test({ name: "eds after cds: delta, a real Envoy", ...opts, fn: () => scenario(true) });
