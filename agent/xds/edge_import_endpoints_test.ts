/**
 * Endpoint churn in another cluster costs the edge one ClusterLoadAssignment: with 100
 * ServiceImport backends, a new ClusterSetEndpoints object for one import (the registry source's
 * way of saying "this service's endpoints changed") takes the endpoint fast path and encodes that
 * import's assignment alone. Without resolve's memo of import endpoints, or without the fast path
 * keeping unchanged assignments, every import's is made and encoded again and this test fails.
 */
import assert from "node:assert/strict";
import { Engine } from "../../lib/engine/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { gateway, gatewayClass, httpRoute } from "../../testbed/fixtures/objects.ts";
import { EncodeMetrics, SnapshotCache } from "./cache/mod.ts";
import { EdgeSnapshots } from "./edge_snapshots.ts";
import { TypeUrl } from "./proto.ts";

const IMPORTS = 100;

/** Import `svc-<s>`'s ClusterSetEndpoints: two clusters' endpoints, `moved` replacing one. */
function endpointsOf(s: number, moved?: string): KubeObject {
  return {
    apiVersion: "aether.io/v1alpha1",
    kind: "ClusterSetEndpoints",
    metadata: { name: `svc-${s}`, namespace: "team" },
    spec: {
      endpoints: [
        { cluster: "a.eu", address: `10.1.0.${s}`, priority: 0 },
        { cluster: "b.eu", address: moved ?? `10.2.0.${s}`, priority: 1 },
      ].map((e) => ({ ...e, ports: [{ name: "http", protocol: "TCP", port: 8080 }] })),
    },
  };
}

function config(): KubeObject[] {
  const out = [gatewayClass(), gateway("edge", [{ name: "http", protocol: "HTTP", port: 10080 }])];
  for (let s = 0; s < IMPORTS; s++) {
    const name = `svc-${s}`;
    out.push({
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceImport",
      metadata: { name, namespace: "team" },
      spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 80 }] },
    });
    out.push(httpRoute(name, {
      parentRefs: [{ name: "edge", namespace: "default" }],
      hostnames: [`${name}.example.com`],
      rules: [{
        backendRefs: [{ group: "multicluster.x-k8s.io", kind: "ServiceImport", name, port: 80 }],
      }],
    }, "team"));
  }
  return out;
}

Deno.test("edge: one import's endpoints changed encodes that import's ClusterLoadAssignment alone", async () => {
  const registry = new Registry();
  const encodes = new EncodeMetrics(registry);
  const cache = new SnapshotCache();
  const snapshots = new EdgeSnapshots({ cache, metrics: registry });
  const engine = new Engine({
    logger: new Logger("test", () => {}),
    metrics: registry,
    sinks: [snapshots],
  });
  const base = config();
  // The Gateway's namespace lets routes of every namespace attach.
  base[1] = {
    ...base[1],
    spec: {
      ...base[1].spec,
      listeners: [{
        name: "http",
        protocol: "HTTP",
        port: 10080,
        allowedRoutes: { namespaces: { from: "All" } },
      }],
    },
  };
  const endpoints = Array.from({ length: IMPORTS }, (_, s) => endpointsOf(s));
  let revision = 0;
  const apply = async () => {
    await engine.apply({
      revision: ++revision,
      objects: [...base, ...endpoints],
      problems: [],
      origins: new Map(),
    });
    assert.equal(engine.status.error, undefined);
    assert.deepEqual(engine.status.problems, []);
  };
  const claEncoded = () => encodes.encoded.get({ type_url: TypeUrl.endpoint });
  const served = () => cache.getDefaultSnapshot()!.resources(TypeUrl.endpoint);

  await apply();
  assert.equal(served().items.size, IMPORTS);
  assert.equal(claEncoded(), IMPORTS);
  const before = served();

  for (const [i, s] of [7, 42, 7].entries()) {
    const encoded = claEncoded();
    endpoints[s] = endpointsOf(s, `10.250.0.${i}`);
    await apply();
    assert.equal(claEncoded() - encoded, 1, `change ${i}: one ClusterLoadAssignment encoded`);
    const name = `svc-${s}.team.svc.clusterset.local:80`;
    const cla = JSON.stringify(served().items.get(name)?.resource);
    assert.match(cla, new RegExp(`"10\\.250\\.0\\.${i}"`), `${name} serves the new address`);
  }
  const after = served();
  for (const [name, item] of after.items) {
    if (/^svc-(7|42)\./.test(name)) continue;
    assert.equal(item, before.items.get(name), `${name}: the same encoded resource`);
  }
});
