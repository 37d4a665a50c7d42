/**
 * The edge endpoint tests' config: a Gateway open to routes of every namespace, and per import
 * `svc-<s>` a ServiceImport, an HTTPRoute to its port 80 and its ClusterSetEndpoints (two
 * clusters' endpoints, `10.1.0.<s>` and `10.2.0.<s>`); plus an engine with an EdgeSnapshots sink.
 * @module
 */
import assert from "node:assert/strict";
import { Engine } from "../../lib/engine/mod.ts";
import type { IR } from "../../lib/ir/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { gateway, gatewayClass, httpRoute } from "../../testbed/fixtures/objects.ts";
import { EncodeMetrics, SnapshotCache } from "./cache/mod.ts";
import { EdgeSnapshots } from "./edge_snapshots.ts";
import { TypeUrl } from "./proto.ts";

/** Import `svc-<s>`'s ClusterSetEndpoints: two clusters' endpoints, `moved` replacing one. */
export function endpointsOf(s: number, moved?: string): KubeObject {
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

/** The Gateway (routes of every namespace attach) and each import's ServiceImport and route. */
export function importsConfig(imports: number): KubeObject[] {
  const gw = gateway("edge", [{ name: "http", protocol: "HTTP", port: 10080 }]);
  const out = [gatewayClass(), {
    ...gw,
    spec: {
      ...gw.spec,
      listeners: [{
        name: "http",
        protocol: "HTTP",
        port: 10080,
        allowedRoutes: { namespaces: { from: "All" } },
      }],
    },
  }];
  for (let s = 0; s < imports; s++) {
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

/** An edge engine with an EdgeSnapshots sink (with `decorate`), and its CLA encode count. */
export function edgeHarness(decorate?: (ir: IR, objects: readonly KubeObject[]) => IR) {
  const registry = new Registry();
  const encodes = new EncodeMetrics(registry);
  const cache = new SnapshotCache();
  const snapshots = new EdgeSnapshots({ cache, metrics: registry, decorate });
  const engine = new Engine({
    logger: new Logger("test", () => {}),
    metrics: registry,
    sinks: [snapshots],
  });
  let revision = 0;
  return {
    /** Applies `objects` as the next revision; it must resolve without error or problem. */
    apply: async (objects: KubeObject[]) => {
      await engine.apply({ revision: ++revision, objects, problems: [], origins: new Map() });
      assert.equal(engine.status.error, undefined);
      assert.deepEqual(engine.status.problems, []);
    },
    /** ClusterLoadAssignments encoded so far. */
    claEncoded: () => encodes.encoded.get({ type_url: TypeUrl.endpoint }),
    /** The served ClusterLoadAssignments. */
    served: () => cache.getDefaultSnapshot()!.resources(TypeUrl.endpoint),
  };
}
