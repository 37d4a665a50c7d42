/**
 * The edit path's oracle: every result of resolveEdit() deep-equals a cold resolve (a new state)
 * of the same objects — over every golden case with every route edited five ways in a row, and
 * over seeded synthetic edits that mix edits the path takes with ones it must refuse. Each edit
 * bumps the route's generation, so statuses not made again fail here; virtual hosts not rendered
 * again fail here; an edit path without its ClusterUse check fails the route with no virtual
 * host (its cluster is shared with the mesh), one without its virtual-host cluster check fails
 * the synthetic edits (a weight gone to 0 takes a cluster out of the IR).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { goldenCaseNames, readYamlDocsStrict } from "../../testbed/golden.ts";
import { lcg } from "../../testbed/fixtures/lcg.ts";
import { syntheticConfig, syntheticRoute } from "../../testbed/fixtures/synthetic_config.ts";
import { cloneData } from "../data/mod.ts";
import { check, loadedCel, noPaths } from "./_edit_test_utils.ts";
import { resolve, type ResolveOptions } from "./resolve.ts";
import { ResolveState } from "./state/mod.ts";
import type { KubeObject } from "./types.ts";

const dir = fileURLToPath(new URL("./testdata/", import.meta.url));

// deno-lint-ignore no-explicit-any
type Loose = any;

const isChainRoute = (o: KubeObject) => o.kind === "HTTPRoute" || o.kind === "GRPCRoute";

/** A copy of `route` with `change` applied to its spec and its generation bumped. */
function edited(route: KubeObject, change: (spec: Loose, kind: string) => void): KubeObject {
  const copy = cloneData(route) as Loose;
  copy.metadata.generation = (copy.metadata.generation ?? 1) + 1;
  copy.spec ??= {};
  copy.spec.rules ??= [];
  if (copy.spec.rules.length === 0) copy.spec.rules.push({});
  change(copy.spec, copy.kind);
  return copy;
}

/** The five edits each golden route gets in a row; `service` is a backend for the added rule. */
function fiveEdits(service?: { name: string; port: number }) {
  return [
    // A path (HTTPRoute) or method (GRPCRoute) match.
    (spec: Loose, kind: string) => {
      const rule = spec.rules[0];
      rule.matches = rule.matches?.length ? rule.matches : [{}];
      if (kind === "GRPCRoute") rule.matches[0].method = { service: "edit.Edited", method: "Go" };
      else rule.matches[0].path = { type: "PathPrefix", value: "/edited" };
    },
    // A header filter.
    (spec: Loose) => {
      const rule = spec.rules[0];
      rule.filters = [...(rule.filters ?? []), {
        type: "RequestHeaderModifier",
        requestHeaderModifier: { set: [{ name: "x-edited", value: "yes" }] },
      }];
    },
    // A backend weight.
    (spec: Loose) => {
      const ref = spec.rules[0].backendRefs?.[0];
      if (ref) ref.weight = 7;
      else spec.rules[0].matches = [...(spec.rules[0].matches ?? []), {}];
    },
    // A timeout (HTTPRoute), a header match (GRPCRoute has no timeouts).
    (spec: Loose, kind: string) => {
      const rule = spec.rules[0];
      if (kind === "HTTPRoute") rule.timeouts = { request: "3s" };
      else {
        rule.matches = rule.matches?.length ? rule.matches : [{}];
        rule.matches[0].headers = [{ name: "x-edited", value: "grpc" }];
      }
    },
    // One more rule, to a Service no route used (new clusters: the edit path must refuse it).
    (spec: Loose, kind: string) => {
      spec.rules.push({
        matches: [
          kind === "GRPCRoute" ? { method: { service: "edit.Added" } } : {
            path: { type: "Exact", value: "/added" },
          },
        ],
        backendRefs: service ? [{ name: service.name, port: service.port }] : [],
      });
    },
  ];
}

/** A Service no route names as a backend (else any), with its first port. */
function spareService(objects: KubeObject[]): { name: string; port: number } | undefined {
  const used = new Set<string>();
  for (const o of objects.filter(isChainRoute)) {
    for (const rule of (o.spec as Loose)?.rules ?? []) {
      for (const ref of rule.backendRefs ?? []) used.add(`${ref.namespace ?? ""}/${ref.name}`);
    }
  }
  const services = objects.filter((o) => o.kind === "Service" && (o.spec as Loose)?.ports?.length);
  const spare = services.find((s) => !used.has(`/${s.metadata.name}`)) ?? services[0];
  return spare && { name: spare.metadata.name, port: (spare.spec as Loose).ports[0].port };
}

Deno.test("edit path: every golden route edited five ways in a row equals a cold resolve", async () => {
  const cel = await loadedCel();
  const paths = noPaths();
  for (const name of goldenCaseNames(dir)) {
    const base = readYamlDocsStrict(join(dir, `${name}.in.yaml`)) as KubeObject[];
    const options: ResolveOptions = {};
    const state = new ResolveState(cel);
    check(base, options, state, cel, `${name}: first`);
    let objects = base;
    const edits = fiveEdits(spareService(base));
    for (const [i, o] of base.entries()) {
      if (!isChainRoute(o)) continue;
      for (const [e, edit] of edits.entries()) {
        objects = objects.with(i, edited(objects[i], edit));
        const what = `${name}: ${o.kind} ${o.metadata.name} edit ${e}`;
        paths[check(objects, options, state, cel, what)]++;
      }
    }
  }
  // Most edits qualify; the added rules to a new Service (and routes with conflicts) do not.
  assert.ok(paths.edit > 100, `edit path taken ${paths.edit} times, cold ${paths.cold}`);
  assert.ok(paths.cold > 20, `cold path taken ${paths.cold} times`);
});

/** Routes sharing hostnames (one a wildcard over every synthetic route's): multi-route hosts. */
function sharedRoutes(services: number): KubeObject[] {
  return ["shared.example.com", "*.example.com", "shared.example.com", "*.example.com"].map((
    host,
    i,
  ) => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      name: `shared-${i}`,
      namespace: "default",
      generation: 1,
      creationTimestamp: `2026-01-0${2 + i}T00:00:00Z`,
    },
    spec: {
      parentRefs: [{ name: "bench" }],
      hostnames: [host],
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: `/shared-${i}` } }],
        backendRefs: [{ name: `svc-${i % services}`, port: 8080 }],
      }],
    },
  }));
}

Deno.test("edit path: 300 seeded synthetic edits each equal a cold resolve", async () => {
  const cel = await loadedCel();
  const services = 30, routes = 24;
  let objects = [...syntheticConfig({ services, routes, port: 10080 }), ...sharedRoutes(services)];
  const options: ResolveOptions = {};
  const state = new ResolveState(cel);
  check(objects, options, state, cel, "first");
  const rnd = lcg(21);
  const pick = (n: number) => Math.floor(rnd() * n);
  const routeAt = () => {
    const at = objects.map((o, i) => (o.kind === "HTTPRoute" ? i : -1)).filter((i) => i >= 0);
    return at[pick(at.length)];
  };
  const svc = () => `svc-${pick(services + 2)}`; // now and then a Service that does not exist
  const edits: [string, (spec: Loose) => void][] = [
    [
      "header value",
      (
        s,
      ) => (s.rules[0].filters = [{
        type: "RequestHeaderModifier",
        requestHeaderModifier: { set: [{ name: "x-edit", value: `${pick(1e6)}` }] },
      }]),
    ],
    [
      "path",
      (s) => (s.rules[0].matches = [{ path: { type: "PathPrefix", value: `/p${pick(9)}` } }]),
    ],
    [
      "weight",
      (
        s,
      ) => (s.rules[0].backendRefs = (s.rules[0].backendRefs ?? []).map((r: Loose) => ({
        ...r,
        weight: pick(5),
      }))),
    ],
    ["timeout", (s) => (s.rules[s.rules.length - 1].timeouts = { request: `${1 + pick(9)}s` })],
    [
      "add rule",
      (s) =>
        s.rules.push({
          matches: [{ path: { type: "Exact", value: `/r${pick(9)}` } }],
          backendRefs: [{ name: svc(), port: 8080 }],
        }),
    ],
    ["retarget", (s) => (s.rules[0].backendRefs = [{ name: svc(), port: 8080 }])],
    ["drop rule", (s) => s.rules.length > 1 && s.rules.pop()],
    [
      "redirect",
      (
        s,
      ) => (s.rules[0] = {
        filters: [{
          type: "RequestRedirect",
          requestRedirect: { statusCode: 301, hostname: "elsewhere.example.com" },
        }],
      }),
    ],
    ["hostname", (s) => (s.hostnames = [`moved-${pick(3)}.example.com`])],
    ["parentRef", (s) => (s.parentRefs = [{ name: pick(2) ? "bench" : "elsewhere" }])],
    [
      "invalid path",
      (s) => (s.rules[0].matches = [{ path: { type: "PathPrefix", value: "no-slash" } }]),
    ],
  ];
  const paths = noPaths();
  for (let n = 1; n <= 300; n++) {
    const roll = pick(20);
    let what: string;
    if (roll === 0) {
      // A Service edit: never the edit path.
      const at = objects.findIndex((o) => o.kind === "Service" && o.metadata.name === svc());
      if (at < 0) continue;
      objects = objects.with(at, {
        ...objects[at],
        metadata: { ...objects[at].metadata, labels: { n: `${n}` } },
      });
      what = "service label";
    } else if (roll === 1) {
      const k = pick(routes);
      const at = objects.findIndex((o) =>
        o.kind === "HTTPRoute" && o.metadata.name === `route-${k}`
      );
      objects = objects.with(at, syntheticRoute(k, services, n));
      what = "synthetic route again";
    } else {
      // One to three routes edited in one revision.
      const names: string[] = [];
      for (let m = 1 + (roll === 2 ? pick(3) : 0); m > 0; m--) {
        const at = routeAt();
        // The edits the path takes, three times as often as the others.
        const [name, edit] = edits[pick(3) ? pick(4) : pick(edits.length)];
        names.push(name);
        objects = objects.with(at, edited(objects[at], (spec) => edit(spec)));
      }
      what = names.join(" + ");
    }
    paths[check(objects, options, state, cel, `edit ${n}: ${what}`)]++;
  }
  assert.ok(paths.edit > 120 && paths.cold > 40, `edit ${paths.edit}, cold ${paths.cold}`);
});

Deno.test("edit path: a header edit takes it, a hostname edit and a Service edit do not", async () => {
  const cel = await loadedCel();
  let objects = syntheticConfig({ services: 4, routes: 3, port: 10080 });
  const state = new ResolveState(cel);
  const options: ResolveOptions = {};
  assert.equal(check(objects, options, state, cel, "first"), "cold");
  const at = objects.findIndex((o) => o.kind === "HTTPRoute");
  objects = objects.with(at, syntheticRoute(0, 4, 1));
  assert.equal(check(objects, options, state, cel, "header"), "edit");
  // Equal options (another object): still an edit; other options: cold.
  objects = objects.with(at, syntheticRoute(0, 4, 2));
  assert.equal(check(objects, {}, state, cel, "equal options"), "edit");
  objects = objects.with(at, syntheticRoute(0, 4, 3));
  const later: ResolveOptions = { now: "2026-01-01T00:00:00Z" };
  assert.equal(check(objects, later, state, cel, "new now"), "cold");
  objects = objects.with(at, edited(objects[at], (s) => (s.hostnames = ["other.example.com"])));
  assert.equal(check(objects, later, state, cel, "hostname"), "cold");
  const svc = objects.findIndex((o) => o.kind === "Service");
  objects = objects.with(svc, cloneData(objects[svc]));
  assert.equal(check(objects, later, state, cel, "service copy"), "cold");
});

Deno.test("edit path: a route with no virtual host still has its backend clusters checked", async () => {
  // A GRPCRoute accepted on a listener that cannot be programmed (its certificate is missing):
  // it renders no virtual host, yet its backend's cluster, shared with the mesh, is http2.
  const cel = await loadedCel();
  const service = (name: string): KubeObject => ({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace: "default" },
    spec: { ports: [{ name: "http", port: 8080 }] },
  });
  const route: KubeObject = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "GRPCRoute",
    metadata: { name: "g", namespace: "default", generation: 1 },
    spec: { parentRefs: [{ name: "gw" }], rules: [{ backendRefs: [{ name: "a", port: 8080 }] }] },
  };
  let objects: KubeObject[] = [
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "aether" },
      spec: { controllerName: "gateway.aether.io/edge" },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "gw", namespace: "default" },
      spec: {
        gatewayClassName: "aether",
        listeners: [{
          name: "https",
          protocol: "HTTPS",
          port: 8443,
          tls: { mode: "Terminate", certificateRefs: [{ name: "missing" }] },
        }],
      },
    },
    service("a"),
    service("b"),
    route,
  ];
  const state = new ResolveState(cel);
  const options: ResolveOptions = {};
  check(objects, options, state, cel, "first");
  const http2 = (name: string) =>
    resolve(objects, options, new ResolveState(cel)).mesh.clusters.find((c) =>
      c.name === `${name}.aether.internal`
    )?.protocol;
  assert.equal(http2("a"), "http2");
  objects = objects.with(
    4,
    edited(objects[4], (s) => (s.rules[0].matches = [{ method: { service: "x.Y" } }])),
  );
  assert.equal(check(objects, options, state, cel, "match"), "edit");
  objects = objects.with(
    4,
    edited(objects[4], (s) => (s.rules[0].backendRefs = [{ name: "b", port: 8080 }])),
  );
  assert.equal(check(objects, options, state, cel, "retarget"), "cold");
  assert.equal(http2("a"), "http1");
  assert.equal(http2("b"), "http2");
});
