import assert from "node:assert/strict";
import { join } from "node:path";
import { encodeResource, TypeUrl, typeUrlPrefix } from "../../proto.ts";
import { protoFitProblems } from "../_proto_fit_test_utils.ts";
import { toYaml } from "../_test_utils.ts";
import { checkGolden, orphanedOutputs } from "../../../../testbed/golden.ts";
import { outboundListenerName, outboundRouteName, translateNode } from "./mod.ts";
import { nodeGoldenCases, nodeStaticBootstrap, nodeTestdataDir } from "./_test_utils.ts";

Deno.test("translateNode golden files (UPDATE_GOLDEN=1 regenerates)", () => {
  const cases = nodeGoldenCases();
  assert.ok(cases.length >= 3, "golden cases present");
  for (const { name, mesh, view, options } of cases) {
    const got = toYaml(translateNode(mesh, view, options));
    checkGolden(
      join(nodeTestdataDir, `${name}.out.yaml`),
      got,
      "deno test -A agent/xds/translate/node",
    );
  }
});

Deno.test("translateNode golden: no output without its input (UPDATE_GOLDEN=1 deletes them)", () => {
  assert.deepEqual(orphanedOutputs(nodeTestdataDir), []);
});

Deno.test("translateNode is deterministic, sorted, and leaves its input alone", () => {
  for (const { name, mesh, view, options } of nodeGoldenCases()) {
    const before = structuredClone({ mesh, view });
    const a = translateNode(mesh, view, options);
    const b = translateNode(structuredClone(mesh), structuredClone(view), options);
    assert.equal(toYaml(a), toYaml(b), name);
    for (const list of Object.values(a)) {
      const names = list.map((r: { name: string }) => r.name);
      assert.deepEqual(names, [...names].sort(), `${name}: sorted by name`);
    }
    assert.deepEqual({ mesh, view }, before, `${name}: input not mutated`);
  }
});

Deno.test("every node resource encodes and fits the Envoy schema strictly", () => {
  for (const { name, mesh, view, options } of nodeGoldenCases()) {
    const r = translateNode(mesh, view, options);
    const kinds = [
      [TypeUrl.listener, r.listeners],
      [TypeUrl.route, r.routes],
      [TypeUrl.cluster, r.clusters],
      [TypeUrl.endpoint, r.endpoints],
      [TypeUrl.virtualHost, r.virtualHosts],
    ] as const;
    for (const [url, list] of kinds) {
      for (const res of list) {
        assert.equal(res.name, res.resource.name ?? res.resource.cluster_name, `${name}: name`);
        assert.ok(encodeResource(url, res.resource).length > 0, `${name}: ${res.name}`);
        assert.deepEqual(protoFitProblems(url.slice(typeUrlPrefix.length), res.resource), []);
      }
    }
    const problems = protoFitProblems(
      "envoy.config.bootstrap.v3.Bootstrap",
      nodeStaticBootstrap(r),
    );
    assert.deepEqual(problems, [], name);
  }
});

type Obj = Record<string, unknown>;

Deno.test("caller namespace: a pod's listener selects its namespace's route table", () => {
  const demo = nodeGoldenCases().find((c) => c.name === "demo")!;
  const r = translateNode(demo.mesh, demo.view);
  assert.deepEqual(r.listeners.map((l) => l.name), [
    outboundListenerName({ namespace: "a", name: "client-a" }),
    outboundListenerName({ namespace: "b", name: "client-b" }),
  ]);
  const hcmOf = (l: Obj) => ((l.filter_chains as Obj[])[0].filters as Obj[])[0].typed_config as Obj;
  for (const [i, ns] of ["a", "b"].entries()) {
    const l = r.listeners[i].resource;
    const addr = (l.address as Obj).socket_address as Obj;
    assert.equal(addr.address, "127.0.0.1");
    assert.equal(addr.port_value, 18081);
    assert.equal(addr.network_namespace_filepath, `/var/run/netns/pod-${ns}`);
    const hcm = hcmOf(l);
    assert.equal((hcm.rds as Obj).route_config_name, outboundRouteName(ns));
    assert.deepEqual((hcm.http_filters as Obj[]).map((f) => f.name), [
      "envoy.filters.http.on_demand",
      "envoy.filters.http.router",
    ]);
    assert.equal(hcm.strip_any_host_port, undefined, "the Host port picks the service port");
  }
  const firstRoutes = (routeName: string) => {
    const vh = r.virtualHosts.find((x) => x.name === `${routeName}/svc-1.aether.internal`)!;
    return (vh.resource.routes as Obj[]).map((x) => x.name);
  };
  // Routed: the caller's routes, then 404 for whatever no rule matches (GAMMA).
  assert.deepEqual(firstRoutes("outbound.a"), [
    "HTTPRoute/a/pin/rule/0/match/0",
    "HTTPRoute/a/pin/rule/1/match/0",
    "svc-1.aether.internal/not-found",
  ]);
  assert.deepEqual(firstRoutes("outbound.b"), [
    "HTTPRoute/prod/split/rule/0/match/0",
    "svc-1.aether.internal/not-found",
  ]);
  // No route attached: pass-through.
  const v2 = r.virtualHosts.find((x) => x.name === "outbound.b/svc-1-v2.aether.internal")!;
  assert.deepEqual((v2.resource.routes as Obj[]).map((x) => x.name), [
    "svc-1-v2.aether.internal/default",
  ]);
  // Only the dependency set (and what its routes reach) gets clusters: svc-3 is cold.
  assert.deepEqual(r.clusters.map((c) => c.name), [
    "svc-1-v2.aether.internal",
    "svc-1.aether.internal",
    "svc-2.aether.internal",
    "svc-2.aether.internal:8080",
  ]);
  // Route tables carry no vhost of their own: VHDS serves every one, named like its vhost.
  for (const rc of r.routes) {
    assert.equal(rc.resource.virtual_hosts, undefined);
    assert.ok(rc.resource.vhds, "VHDS on");
  }
  for (const vh of r.virtualHosts) assert.equal(vh.resource.name, vh.name);
  assert.deepEqual(r.virtualHosts.map((v) => v.name).filter((n) => n.startsWith("outbound.b/")), [
    "outbound.b/svc-1-v2.aether.internal",
    "outbound.b/svc-1.aether.internal",
    "outbound.b/svc-2.aether.internal",
    "outbound.b/svc-2.aether.internal:8080",
  ]);
});

Deno.test("identity: a Service without a mesh name is served at :15008 under its namespaced name only", () => {
  const c = nodeGoldenCases().find((x) => x.name === "identity_same_name")!;
  const r = translateNode(c.mesh, c.view, c.options);
  const serverNames = (name: string) =>
    (r.listeners.find((l) => l.name === name)?.resource.filter_chains as Obj[] | undefined)
      ?.map((f) => (f.filter_chain_match as Obj).server_names);
  // What the edge dials for two/web (its clusters web.two.aether.internal[:8443]), and what
  // importers in other clusters dial for its ServiceImport's ports.
  assert.deepEqual(serverNames("inbound|two/web-0"), [
    ["8080.web.two.aether.internal", "8080.web.two.svc.clusterset.local"],
    ["8443.web.two.aether.internal", "8443.web.two.svc.clusterset.local"],
  ]);
  assert.deepEqual(serverNames("inbound|one/web-0"), [
    ["8080.web.aether.internal", "8080.web.one.svc.clusterset.local"],
  ]);
  // Mesh callers cannot name two/web: no internal listener, caller cluster or vhost for it.
  const names = [...r.listeners, ...r.clusters, ...r.virtualHosts, ...r.endpoints].map((x) =>
    x.name
  );
  assert.deepEqual(names.filter((n) => n.includes("web.two.")), []);
  assert.ok(names.includes("inbound-internal|10.0.0.2|8080.web.aether.internal"));
  assert.ok(names.includes("inbound|10.0.0.3:9090") && names.includes("inbound|10.0.0.3:9443"));
  // Without the namespaced clusters (the bug): two/web-0 has no inbound listener at all.
  const { namespacedClusters: _n, ...meshOnly } = c.mesh;
  const before = translateNode(meshOnly, c.view, c.options);
  assert.equal(before.listeners.some((l) => l.name === "inbound|two/web-0"), false);
});
