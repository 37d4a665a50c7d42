/**
 * The add path's oracle: every result of resolveEdit() after one route is inserted deep-equals a
 * cold resolve of the same objects — over every golden case with copies of each of its routes
 * added (same hostnames, in the middle; a new hostname, at the end), and over seeded synthetic
 * adds beside wildcard routes that must cover the new hosts, mixed with adds the path must refuse.
 * A new virtual host without the wildcard routes covering it, a status out of place, a Gateway's
 * attachedRoutes not counted or a virtual host not re-rendered fail here.
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

/** A copy of `route` named `name`, with `hostnames` when given. */
function copyOf(route: KubeObject, name: string, hostnames?: string[]): KubeObject {
  const copy = cloneData(route) as Loose;
  copy.metadata.name = name;
  copy.metadata.generation = 1;
  if (hostnames) copy.spec.hostnames = hostnames;
  return copy;
}

Deno.test("add path: copies of every golden route added one at a time equal a cold resolve", async () => {
  const cel = await loadedCel();
  const paths = noPaths();
  for (const name of goldenCaseNames(dir)) {
    let objects = readYamlDocsStrict(join(dir, `${name}.in.yaml`)) as KubeObject[];
    const options: ResolveOptions = {};
    const state = new ResolveState(cel);
    check(objects, options, state, cel, `${name}: first`);
    const routes = objects.filter(isChainRoute);
    for (const [i, route] of routes.entries()) {
      // The same hostnames, right after the original (same age: ordered by name).
      const same = copyOf(route, `${route.metadata.name}-same`);
      const at = objects.indexOf(route) + 1;
      objects = [...objects.slice(0, at), same, ...objects.slice(at)];
      paths[check(objects, options, state, cel, `${name}: ${route.metadata.name} same hosts`)]++;
      // A new exact hostname, at the end, younger.
      const host = `added-${i}.example.com`;
      const fresh = copyOf(route, `${route.metadata.name}-new`, [host]) as Loose;
      fresh.metadata.creationTimestamp = "2030-01-01T00:00:00Z";
      objects = [...objects, fresh];
      paths[check(objects, options, state, cel, `${name}: ${route.metadata.name} new host`)]++;
      // A second route on that new host, first in the list.
      objects = [copyOf(route, `${route.metadata.name}-again`, [host]), ...objects];
      paths[check(objects, options, state, cel, `${name}: ${route.metadata.name} again`)]++;
    }
  }
  // Routes with Service parents (GAMMA cases), catch-all hostnames, refused parents and cases
  // mixing route kinds go cold; exact hostnames on Gateways take the path.
  assert.ok(paths.add > 20, `add path taken ${paths.add} times, cold ${paths.cold}`);
  assert.ok(paths.cold > 20, `cold path taken ${paths.cold} times`);
});

Deno.test("add path: 200 seeded synthetic adds beside wildcard routes, with edits between, each equal a cold resolve", async () => {
  const cel = await loadedCel();
  const services = 30, routes = 24;
  let objects: KubeObject[] = [
    ...syntheticConfig({ services, routes, port: 10080 }),
    routeOn("wild", ["*.example.com"], "svc-1", 3),
    routeOn("wilder", ["*.example.com"], "svc-2", 1),
    routeOn("shared", ["shared.example.com"], "svc-3"),
  ];
  const options: ResolveOptions = {};
  const state = new ResolveState(cel);
  check(objects, options, state, cel, "first");
  const rnd = lcg(7);
  const pick = (n: number) => Math.floor(rnd() * n);
  const paths = noPaths();
  let next = routes;
  for (let n = 1; n <= 200; n++) {
    const roll = pick(10);
    let route: KubeObject;
    let what: string;
    if (roll < 5) {
      route = syntheticRoute(next++, services);
      what = "new host";
    } else if (roll < 7) {
      route = routeOn(
        `on-shared-${n}`,
        ["shared.example.com", `x-${pick(5)}.example.com`],
        "svc-4",
      );
      what = "shared host";
    } else if (roll === 7) {
      route = routeOn(`unused-${n}`, [`u-${n}.example.com`], `svc-${services - 1 - pick(3)}`);
      what = "maybe an unused Service";
    } else if (roll === 8) {
      route = routeOn(`wild-${n}`, [`*.w${pick(3)}.example.com`], "svc-5");
      what = "wildcard";
    } else {
      route = routeOn(`route-${pick(next)}`, [`dup-${n}.example.com`], "svc-6");
      what = "duplicate name";
    }
    const at = pick(objects.length + 1);
    objects = [...objects.slice(0, at), route, ...objects.slice(at)];
    paths[check(objects, options, state, cel, `add ${n}: ${what} at ${at}`)]++;
    if (pick(4) === 0) {
      // An edit after adds: the edit path's index is built again from the added result.
      const k = pick(routes);
      const at = objects.findIndex((o) =>
        o.kind === "HTTPRoute" && o.metadata.name === `route-${k}`
      );
      objects = objects.with(at, syntheticRoute(k, services, n));
      paths[check(objects, options, state, cel, `edit ${n} after adds`)]++;
    }
    if (pick(8) === 0) {
      // Now and then a removal (the remove path, or cold), so adds also start from its result.
      objects = objects.filter((o) => o !== route);
      paths[check(objects, options, state, cel, `remove ${n}`)]++;
    }
  }
  assert.ok(paths.add > 100 && paths.cold > 30, `add ${paths.add}, cold ${paths.cold}`);
  assert.ok(paths.edit > 30, `edit ${paths.edit}`);
});

Deno.test("add path: a new host takes it and counts the listener's routes; a wildcard does not", async () => {
  const cel = await loadedCel();
  let objects = syntheticConfig({ services: 4, routes: 3, port: 10080 });
  const state = new ResolveState(cel);
  const options: ResolveOptions = {};
  assert.equal(check(objects, options, state, cel, "first"), "cold");
  const attached = () => {
    const { result } = resolveEdit(objects, options, state);
    const gw = result.statuses.find((s) => s.kind === "Gateway")!.status as Loose;
    return gw.listeners.map((l: Loose) => l.attachedRoutes);
  };
  assert.deepEqual(attached(), [3]);
  objects = [...objects, syntheticRoute(3, 4)];
  assert.equal(check(objects, options, state, cel, "new host"), "add");
  assert.deepEqual(attached(), [4]);
  const vhosts = resolveEdit(objects, options, state).result.ir.listeners[0].filterChains[0];
  assert.ok(
    vhosts.kind === "http" && vhosts.virtualHosts.some((v) => v.name === "app-3.example.com"),
  );
  objects = [...objects, routeOn("wild", ["*.example.com"], "svc-1")];
  assert.equal(check(objects, options, state, cel, "wildcard"), "cold");
  assert.deepEqual(attached(), [5]);
});
