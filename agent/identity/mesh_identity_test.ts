import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { MeshIR } from "../../lib/ir/mod.ts";
import {
  identityScheme,
  outsideMeshPods,
  plaintextServices,
  podIdentities,
  spiffeIdOf,
  wantedIdentities,
  withIdentities,
} from "./mesh_identity.ts";

const pod = (ns: string, name: string, sa: string | undefined, ip?: string, phase = "Running") =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace: ns, name },
    spec: { nodeName: "n", ...(sa ? { serviceAccountName: sa } : {}) },
    status: { phase, ...(ip ? { podIP: ip } : {}) },
  }) as unknown as KubeObject;

Deno.test("identityScheme: default template, custom template, bad ones refused", () => {
  const s = identityScheme("td.test");
  assert.equal(spiffeIdOf(s, "a", "client"), "spiffe://td.test/ns/a/sa/client");
  const c = identityScheme("td.test", "spiffe://{td}/k8s/{ns}/{sa}");
  assert.equal(spiffeIdOf(c, "a", "b"), "spiffe://td.test/k8s/a/b");
  assert.throws(() => identityScheme("TD"), /trust domain/);
  assert.throws(() => identityScheme("td.test", "spiffe://{td}/ns/{ns}"), /\{sa\}/);
  assert.throws(() => identityScheme("td.test", "spiffe://other/{ns}/{sa}"), /trust domain/);
});

Deno.test("podIdentities: by pod IP, default service account, finished and host-network pods left out", () => {
  const s = identityScheme("td.test");
  const ids = podIdentities([
    pod("a", "p1", "client", "10.0.0.1"),
    pod("b", "p2", undefined, "10.0.0.2"),
    pod("b", "p3", "x", "10.0.0.3", "Succeeded"),
    pod("b", "p4", "x"),
    { ...pod("c", "host", "x", "10.0.0.9"), spec: { serviceAccountName: "x", hostNetwork: true } },
  ], s);
  assert.deepEqual([...ids], [
    ["10.0.0.1", "spiffe://td.test/ns/a/sa/client"],
    ["10.0.0.2", "spiffe://td.test/ns/b/sa/default"],
  ]);
});

Deno.test("podIdentities: opted-out pods and outside namespaces are outside the mesh", () => {
  const s = identityScheme("td.test", undefined, ["kube-system"]);
  const optedOut = pod("a", "out", "x", "10.0.0.5");
  optedOut.metadata.annotations = { "aether.io/capture": "false" };
  const ids = podIdentities([
    pod("a", "in", "x", "10.0.0.4"),
    optedOut,
    pod("kube-system", "dns", "coredns", "10.0.0.6"),
  ], s);
  assert.deepEqual([...ids.keys()], ["10.0.0.4"]);
  const host = pod("a", "h", "x", "10.0.0.7");
  host.spec = { ...host.spec, hostNetwork: true };
  assert.deepEqual(
    [...outsideMeshPods([
      pod("a", "in", "x", "10.0.0.4"),
      optedOut,
      host,
      pod("kube-system", "dns", "coredns", "10.0.0.6"),
    ], s)],
    ["10.0.0.5", "10.0.0.7", "10.0.0.6"],
    "the pods left out, and only those",
  );
  assert.deepEqual(
    [
      ...podIdentities(
        [pod("kube-system", "dns", "coredns", "10.0.0.6")],
        identityScheme("td.test"),
      )
        .keys(),
    ],
    ["10.0.0.6"],
  );
});

Deno.test("wantedIdentities: one per service account, with k8s selectors", () => {
  const s = identityScheme("td.test");
  const w = wantedIdentities([
    { namespace: "a", name: "p1", netnsPath: "/x", serviceAccount: "client" },
    { namespace: "a", name: "p2", netnsPath: "/y", serviceAccount: "client" },
    { namespace: "b", name: "p3", netnsPath: "/z" },
  ], s);
  assert.deepEqual(w, [
    {
      spiffeId: "spiffe://td.test/ns/a/sa/client",
      selectors: [{ type: "k8s", value: "ns:a" }, { type: "k8s", value: "sa:client" }],
    },
    {
      spiffeId: "spiffe://td.test/ns/b/sa/default",
      selectors: [{ type: "k8s", value: "ns:b" }, { type: "k8s", value: "sa:default" }],
    },
  ]);
});

Deno.test("withIdentities: endpoint identities, sorted identity list, plaintext opt-in", () => {
  const mesh: MeshIR = {
    services: [],
    clusters: [{
      name: "b.aether.internal",
      service: "b/b",
      port: 8080,
      protocol: "http1",
      endpoints: [{ address: "10.0.0.2", port: 9090 }, { address: "10.0.0.1", port: 9090 }, {
        address: "192.0.2.1",
        port: 80,
      }],
    }],
  };
  const ids = new Map([["10.0.0.1", "spiffe://t/ns/b/sa/z"], ["10.0.0.2", "spiffe://t/ns/b/sa/a"]]);
  const svc = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { namespace: "b", name: "b", annotations: { "aether.io/mesh-plaintext": "allow" } },
  } as unknown as KubeObject;
  const out = withIdentities(mesh, ids, plaintextServices([svc]));
  const c = out.clusters[0];
  assert.deepEqual(c.identities, ["spiffe://t/ns/b/sa/a", "spiffe://t/ns/b/sa/z"]);
  assert.equal(c.endpoints[0].identity, "spiffe://t/ns/b/sa/a");
  assert.equal(c.endpoints[2].identity, undefined);
  assert.equal(c.plaintextAllowed, true);
  assert.equal(mesh.clusters[0].endpoints[0].identity, undefined, "input not mutated");
  assert.equal(withIdentities(mesh, ids, new Set()).clusters[0].plaintextAllowed, undefined);
  assert.ok(plaintextServices([]).has("default/kubernetes"), "the API server's Service passes");
});

Deno.test("withIdentities: namespaced clusters (no mesh name) get their pods' identities too", () => {
  const cluster = (name: string, service: string, address: string) => ({
    name,
    service,
    port: 8080,
    protocol: "http1" as const,
    endpoints: [{ address, port: 9090 }],
  });
  const mesh: MeshIR = {
    services: [],
    clusters: [cluster("web.aether.internal", "one/web", "10.0.0.2")],
    namespacedClusters: [cluster("web.two.aether.internal", "two/web", "10.0.0.3")],
  };
  const ids = new Map([["10.0.0.2", "spiffe://t/ns/one/sa/web"], [
    "10.0.0.3",
    "spiffe://t/ns/two/sa/web",
  ]]);
  const out = withIdentities(mesh, ids, new Set());
  assert.equal(out.clusters[0].endpoints[0].identity, "spiffe://t/ns/one/sa/web");
  assert.equal(out.namespacedClusters![0].endpoints[0].identity, "spiffe://t/ns/two/sa/web");
  assert.deepEqual(out.namespacedClusters![0].identities, ["spiffe://t/ns/two/sa/web"]);
  const plain = withIdentities({ services: [], clusters: mesh.clusters }, ids, new Set());
  assert.equal("namespacedClusters" in plain, false, "absent stays absent");
});

Deno.test("withIdentities: a UDP cluster gets no identity (datagrams are not tunnelled over mTLS)", () => {
  const mesh: MeshIR = {
    services: [],
    clusters: [{
      name: "dns.aether.internal:53/udp",
      service: "b/dns",
      port: 53,
      protocol: "http1",
      endpoints: [{ address: "10.0.0.1", port: 1053 }],
      udp: true,
    }],
  };
  const out = withIdentities(mesh, new Map([["10.0.0.1", "spiffe://t/ns/b/sa/dns"]]), new Set());
  assert.equal(out.clusters[0].endpoints[0].identity, undefined);
  assert.equal(out.clusters[0].identities, undefined);
});

Deno.test("withIdentities: endpoints of pods outside the mesh are marked, the others stay fail-closed", () => {
  const mesh: MeshIR = {
    services: [],
    clusters: [{
      name: "x.aether.internal",
      service: "b/x",
      port: 8080,
      protocol: "http1",
      endpoints: [
        { address: "10.0.0.1", port: 9090 },
        { address: "10.0.0.5", port: 9090 },
        { address: "192.0.2.1", port: 80 },
      ],
    }],
  };
  const ids = new Map([["10.0.0.1", "spiffe://t/ns/b/sa/x"]]);
  const c = withIdentities(mesh, ids, new Set(), new Set(["10.0.0.5"])).clusters[0];
  assert.deepEqual(c.endpoints.map((e) => [e.identity, e.outsideMesh]), [
    ["spiffe://t/ns/b/sa/x", undefined],
    [undefined, true],
    [undefined, undefined],
  ]);
  assert.equal(c.outsideMeshEndpoints, true);
  assert.equal(c.plaintextAllowed, undefined, "the unknown endpoint is not opted in");
  const none = withIdentities(mesh, ids, new Set()).clusters[0];
  assert.equal(none.outsideMeshEndpoints, undefined);
});
