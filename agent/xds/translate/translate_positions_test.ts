/**
 * Translation walks an IR's virtual hosts by identity: one that is the very object at its
 * position last time (or one position over, after an add or a removal) gives its VHDS resource
 * of last time with no look-up, and every output list keeps its last order (NameOrder) while
 * its names stay where they were. The output always equals a cold translation's.
 */
import assert from "node:assert/strict";
import type { IR, IRHttpFilterChain, IRVirtualHost } from "../../../lib/ir/mod.ts";
import { translate, TranslateMemo } from "./mod.ts";
import { NameOrder, sortedByName } from "./util.ts";
import { toYaml } from "./_test_utils.ts";

Deno.test("NameOrder: sorts as sortedByName; the same names in place, one inserted or taken out, reuse the last order", () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  const names = Array.from({ length: 300 }, () => `n-${next() % 200}`); // duplicates too
  const items = names.map((name, i) => ({ name, i }));
  const order = new NameOrder();
  assert.deepEqual(order.sorted(items), sortedByName(items));
  assert.equal(order.misses, 1);
  const again = items.map((x) => ({ ...x, edited: true }));
  assert.deepEqual(order.sorted(again), sortedByName(again), "stable for equal names too");
  assert.equal(order.hits, 1, "the same names at the same positions: the last order");
  // One name inserted anywhere (a new one, or a duplicate): put in place, as a sort would.
  let list = again;
  for (let k = 0; k < 40; k++) {
    const at = next() % (list.length + 1);
    const name = k % 3 === 0 ? list[next() % list.length].name : `n-${next() % 400}`;
    list = [...list.slice(0, at), { name, i: 1000 + k, edited: true }, ...list.slice(at)];
    assert.deepEqual(order.sorted(list), sortedByName(list), `insert ${k} at ${at}`);
  }
  assert.equal(order.inserts, 40, "each insertion put in place, no sort");
  // One name taken out anywhere: left out of the last order, as a sort would.
  for (let k = 0; k < 40; k++) {
    const at = next() % list.length;
    list = list.toSpliced(at, 1);
    assert.deepEqual(order.sorted(list), sortedByName(list), `remove ${k} at ${at}`);
  }
  assert.equal(order.removes, 40, "each removal left out, no sort");
  assert.equal(order.misses, 1);
  const moved = items.toReversed();
  assert.deepEqual(order.sorted(moved), sortedByName(moved));
  assert.equal(order.misses, 2, "names moved: sorted again");
});

const vhost = (i: number, prefix = "/"): IRVirtualHost => ({
  name: `app-${i}.example.com`,
  domains: [`app-${i}.example.com`],
  routes: [{
    name: `HTTPRoute/default/r-${i}/rule/0/match/0`,
    match: { path: { type: "PathPrefix", value: prefix }, headers: [], queryParams: [] },
    action: { kind: "forward", backends: [{ cluster: "a.mesh.local", weight: 1 }], mirrors: [] },
  }],
} as IRVirtualHost);

function ir(virtualHosts: IRVirtualHost[]): IR {
  const chain = {
    kind: "http",
    name: "0.0.0.0:10080",
    serverNames: [],
    certificateSecrets: [],
    routeConfigName: "http.10080",
    virtualHosts,
  } as unknown as IRHttpFilterChain;
  return {
    listeners: [{
      name: "0.0.0.0:10080",
      address: "0.0.0.0",
      port: 10080,
      protocol: "HTTP",
      filterChains: [chain],
    }],
    clusters: [{
      name: "a.mesh.local",
      service: "default/a",
      port: 8080,
      protocol: "http1",
      endpoints: [{ address: "127.0.0.2", port: 8080 }],
    }],
    secrets: [],
  } as unknown as IR;
}

Deno.test("translate: virtual hosts by identity and position; output as a cold translation's", () => {
  const memo = new TranslateMemo();
  // Not in name order (app-10 sorts before app-2): the output order comes from NameOrder.
  const vhs = Array.from({ length: 40 }, (_, i) => vhost(i));
  const first = translate(ir(vhs), {}, memo);
  const at = () => ({ ...memo.positions });
  const p0 = at();

  // One virtual host edited (a new object): it alone is looked up; the rest come from position.
  const edited = vhs.with(13, vhost(13, "/edited"));
  const second = translate(ir(edited), {}, memo);
  const p1 = at();
  assert.equal(p1.misses - p0.misses, 1);
  assert.equal(p1.hits - p0.hits, 39);
  assert.equal(memo.order.virtualHosts.hits, 1, "output kept in its last order, no sort");
  const changed = second.virtualHosts!.filter((r, i) => r !== first.virtualHosts![i]);
  assert.deepEqual(changed.map((r) => r.name), ["http.10080/app-13.example.com"]);
  assert.equal(toYaml(second), toYaml(translate(structuredClone(ir(edited)))));

  // One removed, one added: found one position over, the new one alone looked up.
  const fewer = edited.toSpliced(5, 1);
  const third = translate(ir(fewer), {}, memo);
  const p2 = at();
  assert.equal(p2.misses, p1.misses, "after the gap, found one position over");
  assert.equal(toYaml(third), toYaml(translate(structuredClone(ir(fewer)))));
  const more = fewer.toSpliced(20, 0, vhost(99));
  const fourth = translate(ir(more), {}, memo);
  assert.equal(at().misses - p2.misses, 1, "the added virtual host alone looked up");
  assert.equal(toYaml(fourth), toYaml(translate(structuredClone(ir(more)))));
  assert.equal(memo.chains.size, 1);
  translate(ir(more.map((v) => ({ ...v }))), {}, memo); // new objects: looked up (WeakMap)
  assert.equal(at().misses - p2.misses, 1 + 40);
});
