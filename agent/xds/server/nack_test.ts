/**
 * NACK handling against a real Envoy 1.40: a route with an invalid RE2 regex passes protobuf
 * encoding but Envoy rejects it. The NACK is recorded with its error_detail and counted, the last
 * good config keeps serving, nothing is re-pushed, and the next good snapshot is served.
 */
import assert from "node:assert/strict";
import { Logger } from "../../../lib/log/mod.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { type NamedResource, Snapshot, SnapshotCache } from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";
import { XdsServer } from "./mod.ts";
import { freePort, get, listener, routeConfig, startEnvoy, waitFor } from "./_test_utils.ts";

/** A route config whose only route matches an invalid regular expression. */
function badRegexRoutes(name: string): NamedResource {
  return {
    name,
    resource: {
      name,
      virtual_hosts: [{
        name: "all",
        domains: ["*"],
        routes: [{
          match: { safe_regex: { regex: "([unclosed" } },
          direct_response: { status: 200, body: { inline_string: "never" } },
        }],
      }],
    },
  };
}

async function nackScenario(delta: boolean): Promise<void> {
  const nodeId = `envoy-nack-${delta ? "delta" : "sotw"}`;
  const port = freePort();
  const logs: string[] = [];
  const metrics = new Registry();
  const cache = new SnapshotCache();
  const good = (body: string) =>
    Snapshot.fromResources({
      listeners: [listener("http", port, "routes")],
      routes: [routeConfig("routes", [{ prefix: "/", direct: body }])],
    });
  const v1 = good("good v1");
  cache.setDefaultSnapshot(v1);
  const server = new XdsServer({ cache, metrics, logger: new Logger("xds", (l) => logs.push(l)) });
  const envoy = await startEnvoy({ nodeId, xdsPort: await server.listen({ port: 0 }), delta });
  const base = `http://127.0.0.1:${port}`;
  const nacks = () =>
    metrics.counter("aether_xds_nacks_total", "").get({ type_url: TypeUrl.route });
  const pushes = () =>
    metrics.counter("aether_xds_pushes_total", "").get({ type_url: TypeUrl.route });
  try {
    await waitFor("ready on v1", () => server.isReady(nodeId), 60_000);
    assert.equal((await get(base)).body, "good v1");

    const bad = Snapshot.fromResources({
      listeners: [listener("http", port, "routes")],
      routes: [badRegexRoutes("routes")],
    });
    cache.setDefaultSnapshot(bad);
    const nack = await waitFor("NACK recorded", () => server.lastNack(nodeId));
    assert.equal(nack.typeUrl, TypeUrl.route);
    assert.equal(nack.version, bad.typeVersion(TypeUrl.route));
    assert.match(nack.errorDetail, /regex|unclosed|missing \)/i);
    assert.equal(nacks(), 1);
    assert.match(
      metrics.render(),
      /aether_xds_nacks_total\{type_url="[^"]+RouteConfiguration"\} 1/,
    );
    assert.ok(logs.some((l) => l.includes("envoy rejected config") && l.includes("error_detail")));
    // The rejected version is not ACKed, the node is not ready, the old routes keep serving.
    assert.equal(server.ackedVersion(nodeId, TypeUrl.route), v1.typeVersion(TypeUrl.route));
    assert.equal(server.isReady(nodeId), false);
    assert.deepEqual(await get(base), { status: 200, body: "good v1" });

    // No re-push loop: nothing is sent for a second.
    const before = pushes();
    await new Promise((r) => setTimeout(r, 1000));
    assert.equal(pushes(), before);
    assert.equal(nacks(), 1);
    assert.equal((await get(base)).body, "good v1");

    // A new good snapshot is pushed, ACKed and served; the NACK stays on record.
    const v2 = good("good v2");
    cache.setDefaultSnapshot(v2);
    await waitFor("ready on v2", () => server.isReady(nodeId));
    assert.equal(server.ackedVersion(nodeId, TypeUrl.route), v2.typeVersion(TypeUrl.route));
    await waitFor("v2 served", async () => (await get(base)).body === "good v2");
    assert.equal(server.lastNack(nodeId)?.version, bad.typeVersion(TypeUrl.route));
  } finally {
    await envoy.stop();
    await server.close();
  }
}

const opts = { sanitizeOps: false, sanitizeResources: false };

Deno.test({
  name: "xds server: SotW NACK keeps the last good config",
  ...opts,
  fn: () => nackScenario(false),
});
Deno.test({
  name: "xds server: delta NACK keeps the last good config",
  ...opts,
  fn: () => nackScenario(true),
});
