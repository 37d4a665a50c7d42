import assert from "node:assert/strict";
import { resolve } from "../../lib/gatewayapi/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import { recordsFromClusterSet, recordsFromMesh } from "./records_from_mesh.ts";

const service = (
  namespace: string,
  name: string,
  spec: Record<string, unknown>,
  creationTimestamp?: string,
): KubeObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name, namespace, ...(creationTimestamp ? { creationTimestamp } : {}) },
  spec: { ports: [{ name: "http", port: 80 }], ...spec },
});

Deno.test("recordsFromMesh: VIPs → A/AAAA; headless and VIP-less services get none", () => {
  const { mesh } = resolve([
    service("a", "web", { clusterIP: "10.96.0.1" }),
    service("a", "dual", { clusterIP: "10.96.0.2", clusterIPs: ["10.96.0.2", "fd00::2"] }),
    service("a", "v6", { clusterIPs: ["fd00::3"] }),
    service("a", "headless", { clusterIP: "None" }),
    service("a", "external", {}),
  ], { meshDomain: "mesh.internal" });
  const m = recordsFromMesh(mesh);
  assert.deepEqual(m.get("web.mesh.internal"), { a: ["10.96.0.1"], aaaa: [] });
  assert.deepEqual(m.get("dual.mesh.internal"), { a: ["10.96.0.2"], aaaa: ["fd00::2"] });
  assert.deepEqual(m.get("v6.mesh.internal"), { a: [], aaaa: ["fd00::3"] });
  assert.equal(m.has("headless.mesh.internal"), false);
  assert.equal(m.size, 3);
});

/**
 * `web` in namespace a (no creationTimestamp) and in b (2020): one owner rule for xDS and DNS —
 * a missing timestamp counts as oldest, so both pick a. (DNS once built its records from raw
 * Services with the opposite rule and answered b's VIP while xDS routed to a.)
 */
Deno.test("recordsFromMesh: DNS answers the VIP of the Service xDS routes the name to", () => {
  const objects = [
    service("b", "web", { clusterIP: "10.96.0.20" }, "2020-01-01T00:00:00Z"),
    service("a", "web", { clusterIP: "10.96.0.10" }),
  ];
  for (const input of [objects, objects.toReversed()]) {
    const { mesh, problems } = resolve(input, { meshDomain: "mesh.internal" });
    const routed = mesh.services.find((s) => s.authority === "web.mesh.internal")!;
    const cluster = mesh.clusters.find((c) => c.name === routed.ports[0].cluster)!;
    assert.equal(`${routed.namespace}/${routed.name}`, "a/web", "xDS: the owner is a/web");
    assert.equal(cluster.service, "a/web", "the cluster is a/web's");
    assert.deepEqual(recordsFromMesh(mesh).get("web.mesh.internal"), {
      a: ["10.96.0.10"],
      aaaa: [],
    });
    assert.ok(problems.length === 0 || problems.every((p) => p.kind === "Service"));
  }
});

Deno.test("recordsFromMesh: an older Service owns the name even when its VIP is absent", () => {
  const { mesh } = resolve([
    service("a", "api", { clusterIP: "None" }, "2019-01-01T00:00:00Z"),
    service("b", "api", { clusterIP: "10.96.0.30" }, "2024-01-01T00:00:00Z"),
  ], { meshDomain: "mesh.internal" });
  assert.deepEqual(mesh.services.map((s) => `${s.namespace}/${s.name}`), ["a/api"]);
  assert.equal(recordsFromMesh(mesh).has("api.mesh.internal"), false);
});

Deno.test("recordsFromMesh: the owner's named ports become SRV ports", () => {
  const objects = [
    service("a", "web", {
      clusterIP: "10.96.0.1",
      ports: [
        { name: "HTTP", port: 80 },
        { name: "dns", port: 53, protocol: "UDP" },
        { port: 9000 },
      ],
    }),
    service(
      "b",
      "web",
      { clusterIP: "10.96.0.2", ports: [{ name: "other", port: 81 }] },
      "2030-01-01T00:00:00Z",
    ),
    service("a", "solo", { clusterIP: "10.96.0.3", ports: [{ port: 80 }] }),
  ];
  const { mesh } = resolve(objects, { meshDomain: "mesh.internal" });
  const m = recordsFromMesh(mesh, objects);
  assert.deepEqual(m.get("web.mesh.internal")?.srv, [
    { service: "http", proto: "tcp", port: 80 },
    { service: "dns", proto: "udp", port: 53 },
  ]);
  assert.deepEqual(m.get("solo.mesh.internal"), { a: ["10.96.0.3"], aaaa: [] }, "unnamed: none");
  assert.equal(recordsFromMesh(mesh).get("web.mesh.internal")?.srv, undefined, "no objects: none");
});

Deno.test("recordsFromClusterSet: ServiceImports answer at <name>.<ns>.svc.clusterset.local", () => {
  const imp = (name: string, spec: Record<string, unknown>): KubeObject => ({
    apiVersion: "multicluster.x-k8s.io/v1beta1",
    kind: "ServiceImport",
    metadata: { namespace: "shop", name },
    spec,
  });
  const objects: KubeObject[] = [
    imp("web", {
      type: "ClusterSetIP",
      ips: ["10.96.7.7", "fd00::7"],
      ports: [{ name: "http", protocol: "TCP", port: 80 }, { protocol: "TCP", port: 81 }],
    }),
    imp("db", { type: "Headless", ports: [{ name: "pg", protocol: "TCP", port: 5432 }] }),
    imp("empty", { type: "Headless" }),
    imp("pending", { type: "ClusterSetIP" }),
    {
      apiVersion: "aether.io/v1alpha1",
      kind: "ClusterSetEndpoints",
      metadata: { namespace: "shop", name: "db" },
      spec: {
        endpoints: [
          { cluster: "b.eu", address: "10.2.0.9", ports: [], priority: 1 },
          { cluster: "a.eu", address: "10.1.0.5", ports: [], priority: 0 },
          { cluster: "a.eu", address: "10.1.0.5", ports: [], priority: 0 },
        ],
      },
    },
  ];
  const m = recordsFromClusterSet(objects);
  const web = "web.shop.svc.clusterset.local";
  assert.deepEqual(m.get(web), {
    a: ["10.96.7.7"],
    aaaa: ["fd00::7"],
    srv: [{ service: "http", proto: "tcp", port: 80 }],
    // SRV at the name: each port number once, target the name (upstream conformance: one record).
    nameSrv: [{ port: 80, target: web }, { port: 81, target: web }],
  });
  // Headless: every exporting cluster's endpoint addresses, once each.
  const db = "db.shop.svc.clusterset.local";
  assert.deepEqual(m.get(db)?.a, ["10.1.0.5", "10.2.0.9"]);
  // … and SRV per endpoint at <hostname>.<clusterid>.<name>, which answers its address.
  assert.deepEqual(m.get(db)?.nameSrv, [
    { port: 5432, target: `10-1-0-5.a.eu.${db}` },
    { port: 5432, target: `10-2-0-9.b.eu.${db}` },
  ]);
  assert.deepEqual(m.get(`10-2-0-9.b.eu.${db}`), { a: ["10.2.0.9"], aaaa: [] });
  // No address (no endpoints, no VIP yet): no record, so NXDOMAIN.
  assert.equal(m.has("empty.shop.svc.clusterset.local"), false);
  assert.equal(m.has("pending.shop.svc.clusterset.local"), false);
  // The zone's schema version (KEP-1645 DNS specification 2.2).
  assert.deepEqual(m.get("dns-version.clusterset.local")?.txt, ["1.0.0"]);
});

/**
 * East-west gateway mode: a headless import's endpoints of another cluster behind its gateway are
 * not routed from here (and a plain dial to a pod address carries no SNI the gateway could route
 * by), so DNS leaves them out; this cluster's own endpoints and flat clusters' are answered.
 */
Deno.test("recordsFromClusterSet: headless endpoints behind another cluster's gateway are left out", () => {
  const imp = (name: string): KubeObject => ({
    apiVersion: "multicluster.x-k8s.io/v1beta1",
    kind: "ServiceImport",
    metadata: { namespace: "shop", name },
    spec: { type: "Headless", ports: [{ name: "pg", protocol: "TCP", port: 5432 }] },
  });
  const cse = (name: string, endpoints: Record<string, unknown>[]): KubeObject => ({
    apiVersion: "aether.io/v1alpha1",
    kind: "ClusterSetEndpoints",
    metadata: { namespace: "shop", name },
    spec: { endpoints },
  });
  const gw = "192.0.2.7:15443";
  const m = recordsFromClusterSet([
    imp("db"),
    imp("remote"),
    cse("db", [
      { cluster: "a.eu", address: "10.1.0.5", ports: [], priority: 0 },
      { cluster: "b.eu", address: "10.2.0.9", ports: [], priority: 1, gateway: gw },
      { cluster: "c.eu", address: "10.3.0.4", ports: [], priority: 1 },
    ]),
    cse("remote", [{ cluster: "b.eu", address: "10.2.0.8", ports: [], priority: 1, gateway: gw }]),
  ]);
  const db = "db.shop.svc.clusterset.local";
  assert.deepEqual(m.get(db)?.a, ["10.1.0.5", "10.3.0.4"]);
  assert.deepEqual(m.get(db)?.nameSrv, [
    { port: 5432, target: `10-1-0-5.a.eu.${db}` },
    { port: 5432, target: `10-3-0-4.c.eu.${db}` },
  ]);
  assert.equal(m.has(`10-2-0-9.b.eu.${db}`), false);
  // Every endpoint behind a gateway: no address, so NXDOMAIN (as with no endpoints).
  assert.equal(m.has("remote.shop.svc.clusterset.local"), false);
});
