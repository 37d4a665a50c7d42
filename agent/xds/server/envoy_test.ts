/**
 * The xDS server against a real Envoy 1.40, SotW and delta: initial config, an update with a new
 * cluster (make-before-break), the endpoint fast path, ACKed versions and Envoy's config_dump.
 */
import assert from "node:assert/strict";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { Snapshot, SnapshotCache } from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";
import { XdsServer } from "./mod.ts";
import {
  configDump,
  dumpVersions,
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

const quiet = Deno.env.get("XDS_DEBUG")
  ? new Logger("xds", undefined, "debug")
  : new Logger("xds", () => {}, "error");

async function scenario(delta: boolean): Promise<void> {
  const nodeId = `envoy-${delta ? "delta" : "sotw"}`;
  const a = startBackend("a");
  const b = startBackend("b");
  const port = freePort();
  const metrics = new Registry();
  const cache = new SnapshotCache();
  const v1 = Snapshot.fromResources({
    listeners: [listener("http", port, "routes")],
    routes: [routeConfig("routes", [
      { prefix: "/direct", direct: "hello v1" },
      { prefix: "/svc", cluster: "svc" },
    ])],
    clusters: [edsCluster("svc")],
    endpoints: [endpoints("svc", [a.port])],
  });
  cache.setDefaultSnapshot(v1);
  const server = new XdsServer({ cache, logger: quiet, metrics });
  // The delta Envoy dials the unix socket, the SotW one the TCP port.
  const sockDir = await Deno.makeTempDir({ prefix: "aether-xds-" });
  const xdsUnixPath = delta ? `${sockDir}/xds.sock` : undefined;
  const xdsPort = await server.listen({ port: 0, unixPath: xdsUnixPath });
  const readyVersions: string[] = [];
  const readyAt = new Map<string, number>();
  server.onReady(nodeId, (v) => {
    readyVersions.push(v);
    readyAt.set(v, performance.now());
  });
  const envoy = await startEnvoy({ nodeId, xdsPort, xdsUnixPath, delta });
  const base = `http://127.0.0.1:${port}`;
  try {
    await waitFor("envoy ready on v1", () => server.isReady(nodeId), 60_000)
      .catch((e) =>
        assert.fail(`${e.message}\n${JSON.stringify(server.status())}\n${envoy.logs()}`)
      );
    assert.deepEqual(readyVersions, [v1.version]);
    assert.equal(server.ackedVersion(nodeId, TypeUrl.listener), v1.typeVersion(TypeUrl.listener));
    assert.equal(server.ackedVersion(nodeId, TypeUrl.cluster), v1.typeVersion(TypeUrl.cluster));
    await waitFor("direct v1", async () => (await get(`${base}/direct`)).body === "hello v1");
    assert.deepEqual(await get(`${base}/svc/x`), { status: 200, body: "backend a /svc/x" });

    const dump1 = dumpVersions(await configDump(envoy.adminUrl));
    // SotW resources carry the type's version; delta resources carry their own content hash.
    const dumped = (typeUrl: string, name: string) =>
      delta ? v1.resources(typeUrl).items.get(name)!.hash : v1.typeVersion(typeUrl);
    assert.ok(dump1.ListenersConfigDump.includes(dumped(TypeUrl.listener, "http")));
    assert.ok(dump1.ClustersConfigDump.includes(dumped(TypeUrl.cluster, "svc")));
    assert.ok(dump1.RoutesConfigDump.includes(dumped(TypeUrl.route, "routes")));

    // v2: a new cluster and a route to it, in one snapshot — Envoy must never answer 503 for it.
    const v2 = Snapshot.fromResources(v2Input(port, a.port, b.port));
    const t0 = performance.now();
    assert.ok(cache.setDefaultSnapshot(v2));
    await waitFor("envoy ready on v2", () => readyVersions.includes(v2.version))
      .catch((e) =>
        assert.fail(`${e.message}\n${JSON.stringify(server.status())}\n${envoy.logs()}`)
      );
    const ackMs = readyAt.get(v2.version)! - t0;
    const served = await get(`${base}/svc2/y`);
    assert.deepEqual(served, { status: 200, body: "backend b /svc2/y" });
    assert.equal((await get(`${base}/direct`)).body, "hello v2");
    console.log(
      `${delta ? "delta" : "sotw"}: v2 pushed → all types ACKed in ${ackMs.toFixed(1)} ms`,
    );

    // Unchanged content: no push at all.
    const pushes = () =>
      metrics.counter("aether_xds_pushes_total", "").get({ type_url: TypeUrl.route });
    const before = pushes();
    const reordered = v2Input(port, a.port, b.port);
    reordered.clusters.reverse();
    reordered.endpoints.reverse();
    assert.equal(cache.setDefaultSnapshot(Snapshot.fromResources(reordered)), false);
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(pushes(), before);

    // Endpoint fast path: svc moves to backend b.
    cache.setEndpoints(undefined, [endpoints("svc", [b.port]), endpoints("svc2", [b.port])]);
    await waitFor(
      "svc served by b",
      async () => (await get(`${base}/svc/z`)).body === "backend b /svc/z",
    );
    await waitFor("ready after EDS change", () => server.isReady(nodeId));
    assert.equal(server.ackedVersion(nodeId, TypeUrl.listener), v2.typeVersion(TypeUrl.listener));

    // Removal: svc2 and its route go away.
    const v3 = Snapshot.fromResources({
      listeners: [listener("http", port, "routes")],
      routes: [routeConfig("routes", [{ prefix: "/direct", direct: "hello v3" }])],
    });
    cache.setDefaultSnapshot(v3);
    await waitFor("envoy ready on v3", () => readyVersions.includes(v3.version))
      .catch((e) =>
        assert.fail(`${e.message}\n${JSON.stringify(server.status())}\n${envoy.logs()}`)
      );
    assert.equal((await get(`${base}/svc2/y`)).status, 404);
    const clusters = await (await fetch(`${envoy.adminUrl}/clusters?format=json`)).text();
    assert.ok(!clusters.includes('"svc2"'), "svc2 removed from Envoy");
  } finally {
    await envoy.stop();
    await server.close();
    await a.close();
    await b.close();
    await Deno.remove(sockDir, { recursive: true });
  }
}

function v2Input(port: number, aPort: number, bPort: number) {
  return {
    listeners: [listener("http", port, "routes")],
    routes: [routeConfig("routes", [
      { prefix: "/direct", direct: "hello v2" },
      { prefix: "/svc2", cluster: "svc2" },
      { prefix: "/svc", cluster: "svc" },
    ])],
    clusters: [edsCluster("svc2"), edsCluster("svc")],
    endpoints: [endpoints("svc2", [bPort]), endpoints("svc", [aPort])],
  };
}

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({ name: "xds server: SotW ADS drives a real Envoy", ...opts, fn: () => scenario(false) });
Deno.test({ name: "xds server: delta ADS drives a real Envoy", ...opts, fn: () => scenario(true) });
