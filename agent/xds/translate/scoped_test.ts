import assert from "node:assert/strict";
import { join } from "node:path";
import type { IR, IRHttpFilterChain } from "../../../lib/ir/mod.ts";
import { checkGolden, readYamlStrict } from "../../../testbed/golden.ts";
import { translate, TranslateMemo } from "./mod.ts";
import { isScoped } from "./scoped.ts";
import { testdataDir, toYaml } from "./_test_utils.ts";

const dir = join(testdataDir, "scoped");
const hosts = () => readYamlStrict(join(dir, "hosts.in.yaml")) as IR;
const chainOf = (ir: IR) => ir.listeners[0].filterChains[0] as IRHttpFilterChain;

Deno.test("scoped routes golden (UPDATE_GOLDEN=1 regenerates)", () => {
  checkGolden(
    join(dir, "hosts.out.yaml"),
    toYaml(translate(hosts(), { scopedRoutesAt: 2 }), false),
    "deno test -A agent/xds/translate",
  );
});

Deno.test("scoped routes: only at the threshold and only with exact hostnames", () => {
  const chain = chainOf(hosts());
  assert.equal(isScoped(chain, 3), true);
  assert.equal(isScoped(chain, 4), false, "below the threshold");
  assert.equal(isScoped(chain, 0), false, "0: never");
  const withWildcard = {
    ...chain,
    virtualHosts: [...chain.virtualHosts, { name: "*.w.io", domains: ["*.w.io"], routes: [] }],
  };
  assert.equal(isScoped(withWildcard, 2), false, "a wildcard hostname has no scope");
  const catchAll = { ...chain, virtualHosts: [{ name: "*", domains: ["*"], routes: [] }] };
  assert.equal(isScoped(catchAll, 1), false, "nor a catch-all");
  // Below the threshold the same IR is one table with VHDS, no scopes.
  const out = translate(hosts(), { scopedRoutesAt: 4 });
  assert.equal(out.scopedRoutes, undefined);
  assert.deepEqual(out.routes.map((r) => r.name), ["http.8080"]);
  assert.equal(out.virtualHosts!.length, 3);
});

Deno.test("scoped routes: with a memo, an unchanged host keeps its table and scope objects", () => {
  const memo = new TranslateMemo();
  const ir = hosts();
  const first = translate(ir, { scopedRoutesAt: 2 }, memo);
  const again = translate(ir, { scopedRoutesAt: 2 }, memo);
  assert.deepEqual(again.routes.map((r, i) => r === first.routes[i]), [true, true, true]);
  assert.deepEqual(again.scopedRoutes!.map((r, i) => r === first.scopedRoutes![i]), [
    true,
    true,
    true,
  ]);
  // Host b edited: its table alone is new; its scope (same key, same table name) is kept.
  const chain = chainOf(ir);
  const b = chain.virtualHosts[1];
  const edited: IR = {
    ...ir,
    listeners: [{
      ...ir.listeners[0],
      filterChains: [{
        ...chain,
        virtualHosts: chain.virtualHosts.with(1, { ...b, routes: b.routes.slice() }),
      }],
    }],
  };
  const after = translate(edited, { scopedRoutesAt: 2 }, memo);
  const same = after.routes.map((r, i) => r === first.routes[i]);
  assert.deepEqual(same, [true, false, true], "b's table alone made again");
  assert.deepEqual(after.routes[1].resource, first.routes[1].resource, "with the same content");
});

Deno.test("scoped routes on demand: every scope on demand, the on-demand filter before the router", () => {
  const out = translate(hosts(), { scopedRoutesAt: 2, scopedRoutesOnDemand: true });
  assert.deepEqual(out.scopedRoutes!.map((r) => r.resource.on_demand), [true, true, true]);
  const filters = JSON.stringify(out.listeners[0].resource).match(/"name":"[a-z_.]+"/g)!
    .filter((n) => /aether\.host_lower_case|envoy\.filters\.http\./.test(n));
  assert.deepEqual(filters, [
    '"name":"aether.host_lower_case"',
    '"name":"envoy.filters.http.lua"',
    '"name":"envoy.filters.http.on_demand"',
    '"name":"envoy.filters.http.router"',
  ]);
  // Eager (the default): no scope on demand, no on-demand filter.
  const eager = translate(hosts(), { scopedRoutesAt: 2 });
  assert.ok(eager.scopedRoutes!.every((r) => !("on_demand" in r.resource)));
  assert.doesNotMatch(JSON.stringify(eager.listeners[0].resource), /on_demand/);
  // One memo through both: switching makes the scopes again.
  const memo = new TranslateMemo();
  translate(hosts(), { scopedRoutesAt: 2 }, memo);
  const switched = translate(hosts(), { scopedRoutesAt: 2, scopedRoutesOnDemand: true }, memo);
  assert.ok(switched.scopedRoutes!.every((r) => r.resource.on_demand === true));
});
