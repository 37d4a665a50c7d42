/**
 * The endpoints path's oracle: every result of resolveEdit() after a revision that changes only
 * ClusterSetEndpoints objects deep-equals a cold resolve (a new state) of the same objects — over
 * the golden cases with ClusterSetEndpoints and over a configuration that uses them every way a
 * cluster can (an edge ServiceImport backend, a clusterset VIP Service on the edge, in the mesh and
 * without a mesh name, an edge and a mesh merged UDP cluster), each with seeded endpoint changes
 * (add, remove, address, port, zone, identity, priority, east-west gateway, empty). The mixed
 * configuration's test also proves each kind of cluster changed at least once, so a path that
 * leaves one kind alone fails the oracle. Interleaved with route edits, the edit path and the
 * endpoints path each start from the other's result (one that forgets its result fails).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { goldenCaseNames, readYamlDocsStrict } from "../../testbed/golden.ts";
import { lcg } from "../../testbed/fixtures/lcg.ts";
import { cloneData } from "../data/mod.ts";
import { CelRules } from "./admission/mod.ts";
import { resolveEdit, type ResolvePath } from "./edit.ts";
import { noPaths } from "./_edit_test_utils.ts";
import { resolve, type ResolveOptions, type ResolveResult } from "./resolve.ts";
import { ResolveState } from "./state/mod.ts";
import type { KubeObject } from "./types.ts";
import type { IRCluster } from "../ir/mod.ts";

const dir = fileURLToPath(new URL("./testdata/", import.meta.url));
const CSE = "ClusterSetEndpoints";

// deno-lint-ignore no-explicit-any
type Loose = any;

/** Resolves `objects` on `state`'s edit paths and cold, asserts them equal; returns both. */
function check(
  objects: KubeObject[],
  state: ResolveState,
  cel: CelRules,
  what: string,
  options: ResolveOptions = {},
): { path: ResolvePath; result: ResolveResult } {
  const { result, path } = resolveEdit(objects, options, state);
  const cold = resolve(objects, options, new ResolveState(cel));
  assert.deepStrictEqual(result, cold, `${what} (${path})`);
  return { path, result };
}

async function loadedCel(): Promise<CelRules> {
  const cel = new CelRules();
  await cel.load();
  return cel;
}

/** The ports (name, protocol, target port, service port) an endpoint of `spec` may have. */
function portsOf(spec: Loose): Loose[] {
  const seen = new Map<string, Loose>();
  for (const e of spec.endpoints ?? []) {
    for (const p of e.ports) seen.set(`${p.name}|${p.protocol}`, p);
  }
  return [...seen.values()];
}

/** One seeded change to a ClusterSetEndpoints object: a new object, `spec` changed. */
function changedEndpoints(o: KubeObject, ports: Loose[], rnd: () => number): [string, KubeObject] {
  const copy = cloneData(o) as Loose;
  const eps: Loose[] = copy.spec.endpoints ??= [];
  const pick = (n: number) => Math.floor(rnd() * n);
  const ip = () => `10.${pick(4)}.${pick(3)}.${1 + pick(250)}`;
  const one = eps.length > 0 ? eps[pick(eps.length)] : undefined;
  const kinds = ["add", "remove", "address", "port", "zone", "identity", "priority", "gateway"];
  const kind = eps.length === 0 ? "add" : rnd() < 0.08 ? "empty" : kinds[pick(kinds.length)];
  switch (kind) {
    case "add":
      eps.push({
        cluster: `c${pick(3)}.eu`,
        address: ip(),
        ports: ports.filter(() => rnd() < 0.7).map((p) => ({ ...p, port: 1000 + pick(9000) })),
        ...(rnd() < 0.5 ? { zone: `z${pick(3)}` } : {}),
        ...(rnd() < 0.7 ? { identity: `spiffe://td/ns/x/sa/s${pick(3)}` } : {}),
        priority: pick(2),
      });
      break;
    case "remove":
      eps.splice(eps.indexOf(one), 1);
      break;
    case "address":
      one.address = ip();
      break;
    case "port":
      if (one.ports.length > 0) one.ports[pick(one.ports.length)].port = 1000 + pick(9000);
      break;
    case "zone":
      if (one.zone) delete one.zone;
      else one.zone = `z${pick(3)}`;
      break;
    case "identity":
      one.identity = rnd() < 0.2 ? undefined : `spiffe://td/ns/x/sa/i${pick(5)}`;
      if (one.identity === undefined) delete one.identity;
      break;
    case "priority":
      one.priority = one.priority ? 0 : 1;
      break;
    case "gateway":
      if (one.gateway) delete one.gateway;
      else one.gateway = `192.0.2.${1 + pick(3)}:15443`;
      break;
    case "empty":
      copy.spec.endpoints = [];
      break;
  }
  return [kind, copy];
}

/** `rounds` seeded changes, each to one or two ClusterSetEndpoints objects; the paths taken. */
function churn(
  base: KubeObject[],
  state: ResolveState,
  cel: CelRules,
  seed: number,
  rounds: number,
  what: string,
  seen?: (before: ResolveResult, after: ResolveResult) => void,
): Record<ResolvePath, number> {
  const at = base.flatMap((o, i) => (o.kind === CSE ? [i] : []));
  assert.ok(at.length > 0, `${what}: no ClusterSetEndpoints`);
  const ports = new Map(at.map((i) => [i, portsOf((base[i] as Loose).spec)]));
  const paths = noPaths();
  const rnd = lcg(seed);
  let objects = base;
  let before = check(objects, state, cel, `${what}: first`).result;
  for (let n = 0; n < rounds; n++) {
    const kinds: string[] = [];
    for (let k = 0; k < (rnd() < 0.3 ? 2 : 1); k++) {
      const i = at[Math.floor(rnd() * at.length)];
      const [kind, next] = changedEndpoints(objects[i], ports.get(i)!, rnd);
      kinds.push(kind);
      objects = objects.with(i, next);
    }
    const { path, result } = check(objects, state, cel, `${what}: change ${n} (${kinds})`);
    paths[path]++;
    seen?.(before, result);
    before = result;
  }
  return paths;
}

Deno.test("endpoints path: golden cases with ClusterSetEndpoints, seeded changes, equal a cold resolve", async () => {
  const cel = await loadedCel();
  let cases = 0;
  for (const name of goldenCaseNames(dir)) {
    const base = readYamlDocsStrict(join(dir, `${name}.in.yaml`)) as KubeObject[];
    if (!base.some((o) => o.kind === CSE)) continue;
    cases++;
    const paths = churn(base, new ResolveState(cel), cel, 7 + cases, 120, name);
    assert.deepStrictEqual(paths, { ...noPaths(), endpoints: 120 }, name);
  }
  assert.ok(cases >= 2, `${cases} golden cases with ClusterSetEndpoints`);
});

const MCS = "multicluster.x-k8s.io";
const GW = "gateway.networking.k8s.io/v1";
const ANNOTATION = "multicluster.aether.io/service-import";

/** An import, its ClusterSetEndpoints and its clusterset VIP Service (`mcs-<name>`). */
function imported(name: string, ip: string, ports: Loose[], created: string): KubeObject[] {
  const port = (p: Loose, i: number) => ({ ...p, port: 4000 + 10 * i + p.port % 10 });
  return [
    {
      apiVersion: `${MCS}/v1beta1`,
      kind: "ServiceImport",
      metadata: { name, namespace: "shop" },
      spec: { type: "ClusterSetIP", ips: [ip], ports },
    },
    {
      apiVersion: "aether.io/v1alpha1",
      kind: CSE,
      metadata: { name, namespace: "shop" },
      spec: {
        endpoints: [
          { cluster: "a.eu", address: "10.1.0.5", ports: ports.map(port), priority: 0 },
          {
            cluster: "b.eu",
            address: "10.2.0.9",
            ports: ports.map(port),
            zone: "z1",
            identity: `spiffe://td/ns/shop/sa/${name}`,
            priority: 1,
          },
        ],
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: `mcs-${name}`,
        namespace: "shop",
        creationTimestamp: created,
        annotations: { [ANNOTATION]: name },
      },
      spec: { clusterIP: ip, ports },
    },
  ];
}

/**
 * Every way a ClusterSetEndpoints object feeds a cluster: the edge's HTTPRoute to import hello
 * and VIP Service mcs-web and mcs-db (no mesh name: an older mcs-db in namespace old owns it);
 * the edge's UDPRoute merging import web's UDP port and mcs-hello's; a mesh HTTPRoute on Service
 * front to import hello; a mesh UDPRoute on front merging mcs-hello and mcs-web.
 */
function mixed(): KubeObject[] {
  const tcp = (name: string, port: number) => ({ name, protocol: "TCP", port });
  const udp = (name: string, port: number) => ({ name, protocol: "UDP", port });
  const ref = (name: string, port: number, weight = 1, kind?: string) => ({
    ...(kind ? { group: MCS, kind } : {}),
    name,
    port,
    weight,
  });
  const route = (kind: string, name: string, parent: Loose, backendRefs: Loose[]) => ({
    apiVersion: kind === "UDPRoute" ? "gateway.networking.k8s.io/v1alpha2" : GW,
    kind,
    metadata: { name, namespace: "shop", creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: { parentRefs: [parent], rules: [{ backendRefs }] },
  });
  return [
    {
      apiVersion: GW,
      kind: "GatewayClass",
      metadata: { name: "aether" },
      spec: { controllerName: "gateway.aether.io/edge" },
    },
    {
      apiVersion: GW,
      kind: "Gateway",
      metadata: { name: "edge", namespace: "shop" },
      spec: {
        gatewayClassName: "aether",
        listeners: [
          { name: "web", port: 80, protocol: "HTTP" },
          { name: "dns", port: 5353, protocol: "UDP" },
        ],
      },
    },
    ...imported(
      "hello",
      "10.96.88.10",
      [tcp("tcp", 42), udp("udp", 42), tcp("http", 80)],
      "2026-01-01T00:00:00Z",
    ),
    ...imported("web", "10.96.88.11", [tcp("http", 80), udp("dns", 53)], "2026-01-01T00:00:00Z"),
    ...imported("db", "10.96.88.12", [tcp("http", 80)], "2026-01-01T00:00:00Z"),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "mcs-db", namespace: "old", creationTimestamp: "2020-01-01T00:00:00Z" },
      spec: { clusterIP: "10.96.9.9", ports: [tcp("http", 80)] },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "front", namespace: "shop" },
      spec: { clusterIP: "10.96.9.1", ports: [tcp("http", 80), udp("dns", 53)] },
    },
    route("HTTPRoute", "edge-http", { name: "edge", sectionName: "web" }, [
      ref("hello", 80, 2, "ServiceImport"),
      ref("mcs-web", 80),
      ref("mcs-db", 80),
    ]),
    route("UDPRoute", "edge-udp", { name: "edge", sectionName: "dns" }, [
      ref("web", 53, 2, "ServiceImport"),
      ref("mcs-hello", 42, 1),
    ]),
    route("HTTPRoute", "mesh-http", { group: "", kind: "Service", name: "front", port: 80 }, [
      ref("hello", 42, 1, "ServiceImport"),
    ]),
    route("UDPRoute", "mesh-udp", { group: "", kind: "Service", name: "front", port: 53 }, [
      ref("mcs-hello", 42, 3),
      ref("mcs-web", 53, 1),
    ]),
  ];
}

/** Where a cluster sits and what it is made of: `edge|mesh|namespaced` / `import|vip|udp`. */
function clusterKinds(r: ResolveResult): Map<string, IRCluster> {
  const out = new Map<string, IRCluster>();
  const kind = (c: IRCluster) =>
    c.name.startsWith("aether.udp/")
      ? "udp"
      : c.name.includes(".svc.clusterset.local:")
      ? "import"
      : c.service.startsWith("shop/mcs-")
      ? "vip"
      : "other";
  for (const c of r.ir.clusters) out.set(`edge/${kind(c)}/${c.name}`, c);
  for (const c of r.mesh.clusters) out.set(`mesh/${kind(c)}/${c.name}`, c);
  for (const c of r.mesh.namespacedClusters ?? []) out.set(`namespaced/${kind(c)}/${c.name}`, c);
  return out;
}

Deno.test("endpoints path: every kind of cluster a ClusterSetEndpoints object feeds, 300 seeded changes", async () => {
  const cel = await loadedCel();
  const base = mixed();
  const first = resolve(base, {}, new ResolveState(cel));
  // The one problem is the meant one: shop/mcs-db has no mesh name.
  assert.deepStrictEqual(first.problems.map((p) => `${p.kind} ${p.namespace}/${p.name}`), [
    "Service shop/mcs-db",
  ]);
  // Every route accepted with its references resolved: each backend is used.
  const refused = JSON.stringify(first.statuses).match(
    /"status":"False","type":"(Accepted|ResolvedRefs)"/g,
  );
  assert.equal(refused, null);
  const kinds = [...clusterKinds(first).keys()].map((k) => k.split("/").slice(0, 2).join("/"))
    .filter((k) => !k.endsWith("/other"));
  const expected = [
    "edge/import",
    "edge/udp",
    "edge/vip",
    "mesh/import",
    "mesh/udp",
    "mesh/vip",
    "namespaced/vip",
  ];
  assert.deepStrictEqual([...new Set(kinds)].sort(), expected);
  const changed = new Set<string>();
  const paths = churn(base, new ResolveState(cel), cel, 20, 300, "mixed", (before, after) => {
    const was = clusterKinds(before);
    for (const [k, c] of clusterKinds(after)) {
      if (JSON.stringify(c.endpoints) !== JSON.stringify(was.get(k)?.endpoints)) {
        changed.add(k.split("/").slice(0, 2).join("/"));
      }
    }
  });
  assert.deepStrictEqual(paths, { ...noPaths(), endpoints: 300 });
  // Each kind changed at least once: a path that leaves one alone fails the oracle above.
  assert.deepStrictEqual([...changed].sort(), expected);
});

Deno.test("endpoints path: a ClusterSetEndpoints change with a route edit, renamed, invalid or duplicated goes cold", async () => {
  const cel = await loadedCel();
  const base = mixed();
  const at = base.findIndex((o) => o.kind === CSE);
  const routeAt = base.findIndex((o) => o.kind === "HTTPRoute");
  const cse = base[at] as Loose;
  const moved = { ...cse, spec: { endpoints: [] } };
  const cases: [string, KubeObject[], ResolvePath][] = [
    ["endpoints only", base.with(at, moved), "endpoints"],
    ["with a route edit", base.with(at, moved).with(routeAt, cloneData(base[routeAt])), "cold"],
    ["renamed", base.with(at, { ...moved, metadata: { ...cse.metadata, name: "other" } }), "cold"],
    ["another version", base.with(at, { ...moved, apiVersion: "aether.io/v9" }), "cold"],
    ["not namespaced", base.with(at, { ...moved, metadata: { name: cse.metadata.name } }), "cold"],
  ];
  for (const [what, objects, path] of cases) {
    const state = new ResolveState(cel);
    check(base, state, cel, `${what}: first`);
    assert.equal(check(objects, state, cel, what).path, path, what);
  }
  // A duplicate (the first one is used): a change to either goes cold.
  const dup = [...base, cloneData(cse) as KubeObject];
  for (const i of [at, dup.length - 1]) {
    const state = new ResolveState(cel);
    check(dup, state, cel, "duplicate: first");
    assert.equal(check(dup.with(i, moved), state, cel, `duplicate ${i}`).path, "cold");
  }
  // Not admitted (an invalid name, before and after): cold. (The kind has no schema beyond its
  // metadata, so its problem is also in the last result: either check sends it cold.)
  const bad = { ...cse, metadata: { ...cse.metadata, name: "Bad_Name" } };
  const invalid = base.with(at, bad);
  const badState = new ResolveState(cel);
  check(invalid, badState, cel, "invalid: first");
  const next = { ...bad, spec: { endpoints: [] } };
  assert.equal(check(invalid.with(at, next), badState, cel, "invalid").path, "cold");
  // Other options: cold.
  const state = new ResolveState(cel);
  check(base, state, cel, "options: first");
  const other = { meshDomain: "other.internal" };
  assert.equal(check(base.with(at, moved), state, cel, "options", other).path, "cold");
});

Deno.test("endpoints path: interleaved with route edits, each path builds on the other's result", async () => {
  const cel = await loadedCel();
  let objects = mixed();
  const at = objects.findIndex((o) => o.kind === CSE);
  const routeAt = objects.findIndex((o) => o.metadata.name === "edge-http");
  const ports = portsOf((objects[at] as Loose).spec);
  const state = new ResolveState(cel);
  check(objects, state, cel, "first");
  const rnd = lcg(5);
  const paths: ResolvePath[] = [];
  for (let n = 0; n < 40; n++) {
    if (n % 2 === 0) {
      objects = objects.with(at, changedEndpoints(objects[at], ports, rnd)[1]);
    } else {
      const route = cloneData(objects[routeAt]) as Loose;
      route.metadata.generation = n;
      route.spec.rules[0].filters = [{
        type: "RequestHeaderModifier",
        requestHeaderModifier: { set: [{ name: "x-n", value: `${n}` }] },
      }];
      objects = objects.with(routeAt, route);
    }
    paths.push(check(objects, state, cel, `step ${n}`).path);
  }
  assert.deepStrictEqual(paths, paths.map((_, n) => (n % 2 === 0 ? "endpoints" : "edit")));
});
