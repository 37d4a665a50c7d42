import assert from "node:assert/strict";
import { IdentityMemo } from "../memo/mod.ts";
import type { IRCluster } from "../ir/mod.ts";
import type { ClusterSetEndpointsSpec } from "./core_types.ts";
import { type ImportEndpointsMemo, memoizedImportEndpoints } from "./imports_memo.ts";
import { resolve } from "./resolve.ts";
import { ResolveState } from "./state/mod.ts";
import type { KubeObject } from "./types.ts";

const http = { name: "http", protocol: "TCP", port: 80 };

const endpointsOf = (...addresses: string[]): ClusterSetEndpointsSpec => ({
  endpoints: addresses.map((address, i) => ({
    cluster: i === 0 ? "a.eu" : "b.eu",
    address,
    ports: [{ name: "http", protocol: "TCP", port: 8080 }],
    priority: i === 0 ? 0 : 1,
  })),
});

Deno.test("memoizedImportEndpoints: one array per spec object, use and port", () => {
  const memo: ImportEndpointsMemo = new IdentityMemo();
  const spec = endpointsOf("10.1.0.1", "10.2.0.1");
  const first = memoizedImportEndpoints(memo, "import", spec, http);
  assert.deepEqual(first.map((e) => [e.address, e.port, e.priority]), [
    ["10.1.0.1", 8080, undefined],
    ["10.2.0.1", 8080, 1],
  ]);
  assert.equal(memoizedImportEndpoints(memo, "import", spec, { ...http }), first);
  const vip = memoizedImportEndpoints(memo, "vip", spec, http);
  assert.notEqual(vip, first, "a VIP Service's cluster gets its own array");
  assert.deepEqual(vip, first);
  // A new spec object (the registry source's way of saying "changed") is read again.
  const again = memoizedImportEndpoints(memo, "import", endpointsOf("10.1.0.1", "10.2.0.1"), http);
  assert.notEqual(again, first);
  assert.deepEqual(again, first);
  assert.deepEqual(memo.stats(), { hits: 1, misses: 3 });
  assert.deepEqual(memoizedImportEndpoints(memo, "import", undefined, http), []);
});

/** Gateway, two imports (web, db) with their endpoints, a route to both, web's VIP Service. */
function objects(db: KubeObject): KubeObject[] {
  const importOf = (name: string): KubeObject => ({
    apiVersion: "multicluster.x-k8s.io/v1beta1",
    kind: "ServiceImport",
    metadata: { name, namespace: "app" },
    spec: { type: "ClusterSetIP", ports: [http] },
  });
  return [
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "aether" },
      spec: { controllerName: "gateway.aether.io/edge" },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "edge", namespace: "app" },
      spec: {
        gatewayClassName: "aether",
        listeners: [{ name: "web", port: 80, protocol: "HTTP" }],
      },
    },
    importOf("web"),
    importOf("db"),
    web,
    db,
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "imports", namespace: "app" },
      spec: {
        parentRefs: [{ name: "edge" }],
        rules: ["web", "db"].map((name) => ({
          matches: [{ path: { type: "PathPrefix", value: `/${name}` } }],
          backendRefs: [{ group: "multicluster.x-k8s.io", kind: "ServiceImport", name, port: 80 }],
        })),
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "mesh", namespace: "app" },
      spec: {
        parentRefs: [{ group: "", kind: "Service", name: "mcs-web", port: 80 }],
        rules: [{ backendRefs: [{ name: "mcs-web", port: 80 }] }],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: "mcs-web",
        namespace: "app",
        annotations: { "multicluster.aether.io/service-import": "web" },
      },
      spec: { clusterIP: "10.96.7.7", ports: [http] },
    },
  ];
}

const cse = (name: string, spec: ClusterSetEndpointsSpec): KubeObject => ({
  apiVersion: "aether.io/v1alpha1",
  kind: "ClusterSetEndpoints",
  metadata: { name, namespace: "app" },
  spec,
});
const web = cse("web", endpointsOf("10.1.0.5", "10.2.0.9"));

Deno.test("resolve: an unchanged import keeps its endpoints array; a changed one alone is new", () => {
  const state = new ResolveState();
  const clusters = (r: ReturnType<typeof resolve>) =>
    new Map<string, IRCluster>(
      [...r.ir.clusters, ...r.mesh.clusters].map((c) => [c.name, c] as const),
    );
  const first = clusters(resolve(objects(cse("db", endpointsOf("10.1.1.1"))), {}, state));
  const webName = "web.app.svc.clusterset.local:80", dbName = "db.app.svc.clusterset.local:80";
  const vip = [...first.values()].find((c) => c.service === "app/mcs-web");
  assert.ok(first.get(webName) && first.get(dbName) && vip, [...first.keys()].join(", "));
  assert.deepEqual(vip.endpoints, first.get(webName)!.endpoints);
  assert.notEqual(vip.endpoints, first.get(webName)!.endpoints, "clusters never share an array");

  const second = clusters(resolve(objects(cse("db", endpointsOf("10.1.1.2"))), {}, state));
  assert.equal(second.get(webName)!.endpoints, first.get(webName)!.endpoints, "web unchanged");
  assert.equal(
    [...second.values()].find((c) => c.service === "app/mcs-web")!.endpoints,
    vip.endpoints,
    "web's VIP Service unchanged",
  );
  assert.notEqual(second.get(dbName)!.endpoints, first.get(dbName)!.endpoints);
  assert.deepEqual(second.get(dbName)!.endpoints.map((e) => e.address), ["10.1.1.2"]);
});
