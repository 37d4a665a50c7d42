/**
 * The remove path's oracle: every result of resolveEdit() after one route is deleted deep-equals
 * a cold resolve of the same objects — over every golden case with each of its routes deleted in
 * turn (and put back) and with a copy of each on a host of its own added and deleted, and over seeded synthetic deletions beside wildcard routes and routes that
 * share a host, mixed with adds and edits. A virtual host left behind or dropped while another
 * route still names its host, a cluster kept that no route forwards to any more, a status left
 * in place or a Gateway's attachedRoutes not counted down fail here.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { goldenCaseNames, readYamlDocsStrict } from "../../testbed/golden.ts";
import { lcg } from "../../testbed/fixtures/lcg.ts";
import { syntheticConfig, syntheticRoute } from "../../testbed/fixtures/synthetic_config.ts";
import { cloneData } from "../data/mod.ts";
import { check, loadedCel, noPaths, routeOn } from "./_edit_test_utils.ts";
import type { ResolveOptions } from "./resolve.ts";
import { resolveEdit } from "./edit.ts";
import { ResolveState } from "./state/mod.ts";
import type { KubeObject } from "./types.ts";

const dir = fileURLToPath(new URL("./testdata/", import.meta.url));

// deno-lint-ignore no-explicit-any
type Loose = any;

const isChainRoute = (o: KubeObject) => o.kind === "HTTPRoute" || o.kind === "GRPCRoute";

Deno.test("remove path: every golden route deleted in turn equals a cold resolve", async () => {
  const cel = await loadedCel();
  const paths = noPaths();
  for (const name of goldenCaseNames(dir)) {
    const all = readYamlDocsStrict(join(dir, `${name}.in.yaml`)) as KubeObject[];
    const options: ResolveOptions = {};
    const state = new ResolveState(cel);
    check(all, options, state, cel, `${name}: first`);
    for (const [i, route] of all.filter(isChainRoute).entries()) {
      const without = all.filter((o) => o !== route);
      paths[check(without, options, state, cel, `${name}: ${route.metadata.name} deleted`)]++;
      // Back again (the add path or cold), so the next deletion starts from the whole case.
      check(all, options, state, cel, `${name}: ${route.metadata.name} back`);
      // A copy on a host of its own, then deleted: on every listener shape of the case.
      const copy = cloneData(route) as Loose;
      copy.metadata.name = `${route.metadata.name}-copy`;
      copy.spec.hostnames = [`copy-${i}.example.com`];
      check([...all, copy], options, state, cel, `${name}: ${copy.metadata.name} added`);
      paths[check(all, options, state, cel, `${name}: ${copy.metadata.name} deleted`)]++;
    }
  }
  // Routes with Service parents (GAMMA cases), catch-all hostnames, refused parents and cases
  // mixing route kinds go cold; exact hostnames on Gateways take the path.
  assert.ok(paths.remove > 15, `remove path taken ${paths.remove} times, cold ${paths.cold}`);
  assert.ok(paths.cold > 50, `cold path taken ${paths.cold} times`);
});

Deno.test("remove path: 300 seeded synthetic deletions and adds beside wildcard and shared-host routes, each equal a cold resolve", async () => {
  const cel = await loadedCel();
  const services = 40, routes = 40;
  let objects: KubeObject[] = [
    ...syntheticConfig({ services, routes, port: 10080 }),
    routeOn("wild", ["*.example.com"], "svc-1", 3),
    routeOn("shared", ["shared.example.com"], "svc-3"),
  ];
  const options: ResolveOptions = {};
  const state = new ResolveState(cel);
  check(objects, options, state, cel, "first");
  const rnd = lcg(11);
  const pick = (n: number) => Math.floor(rnd() * n);
  const paths = noPaths();
  let next = routes;
  for (let n = 1; n <= 300; n++) {
    const roll = pick(10);
    if (roll < 5) {
      // A deletion of any route but the two the rest stands on.
      const candidates = objects.filter((o) =>
        isChainRoute(o) && o.metadata.name !== "wild" && o.metadata.name !== "shared"
      );
      if (candidates.length === 0) continue;
      const gone = candidates[pick(candidates.length)];
      objects = objects.filter((o) => o !== gone);
      paths[check(objects, options, state, cel, `delete ${n}: ${gone.metadata.name}`)]++;
      continue;
    }
    let route: KubeObject;
    if (roll < 7) route = syntheticRoute(next++, services);
    else if (roll < 9) {
      route = routeOn(
        `on-shared-${n}`,
        ["shared.example.com", `x-${pick(4)}.example.com`],
        `svc-${services - 1 - pick(4)}`,
      );
    } else route = routeOn(`wild-${n}`, [`*.w${pick(3)}.example.com`], "svc-5");
    const at = pick(objects.length + 1);
    objects = [...objects.slice(0, at), route, ...objects.slice(at)];
    paths[check(objects, options, state, cel, `add ${n}: ${route.metadata.name}`)]++;
    if (pick(5) === 0) {
      // An edit between: the edit path's index is built again from the changed result.
      const k = pick(routes);
      const i = objects.findIndex((o) => isChainRoute(o) && o.metadata.name === `route-${k}`);
      if (i >= 0) {
        objects = objects.with(i, syntheticRoute(k, services, n));
        paths[check(objects, options, state, cel, `edit ${n}`)]++;
      }
    }
  }
  assert.ok(paths.remove > 80, `remove ${paths.remove}, cold ${paths.cold}`);
  assert.ok(paths.add > 40 && paths.cold > 10, `add ${paths.add}, cold ${paths.cold}`);
});

Deno.test("remove path: a host only the route named goes, a shared one stays, its lone cluster goes, the listener counts one less", async () => {
  const cel = await loadedCel();
  const base = syntheticConfig({ services: 8, routes: 3, port: 10080 });
  const lone = routeOn("lone", ["lone.example.com"], "svc-7");
  const shared = routeOn("shared", ["app-0.example.com"], "svc-6");
  let objects = [...base, lone, shared];
  const state = new ResolveState(cel);
  const options: ResolveOptions = {};
  assert.equal(check(objects, options, state, cel, "first"), "cold");
  const now = () => resolveEdit(objects, options, state).result;
  const hosts = () => {
    const chain = now().ir.listeners[0].filterChains[0] as Loose;
    return chain.virtualHosts.map((v: Loose) => v.name);
  };
  const attached = () =>
    (now().statuses.find((s) => s.kind === "Gateway")!.status as Loose).listeners[0]
      .attachedRoutes;
  const clusters = () => now().ir.clusters.map((c) => c.name);
  assert.ok(hosts().includes("lone.example.com"));
  assert.ok(clusters().includes("svc-7.aether.internal"));
  assert.equal(attached(), 5);

  objects = objects.filter((o) => o !== lone);
  assert.equal(check(objects, options, state, cel, "lone deleted"), "remove");
  assert.ok(!hosts().includes("lone.example.com"), "its host has no virtual host any more");
  assert.ok(!clusters().includes("svc-7.aether.internal"), "its lone cluster is gone");
  assert.equal(attached(), 4);
  assert.ok(!now().statuses.some((s) => s.name === "lone"), "its status is gone");

  objects = objects.filter((o) => o !== shared);
  assert.equal(check(objects, options, state, cel, "shared deleted"), "remove");
  assert.ok(hosts().includes("app-0.example.com"), "route-0 still names app-0.example.com");
  assert.equal(attached(), 3);

  const wild = routeOn("wild", ["*.example.com"], "svc-1");
  objects = [...objects, wild];
  check(objects, options, state, cel, "wildcard added");
  objects = objects.filter((o) => o !== wild);
  assert.equal(check(objects, options, state, cel, "wildcard deleted"), "cold");
});
