import assert from "node:assert/strict";
import { replaced } from "./overlay_map.ts";

const entries = (m: ReadonlyMap<string, number>) => [...m];

Deno.test("replaced: a few values over a big map, without copying it; the map itself unchanged", () => {
  const base = new Map(Array.from({ length: 1000 }, (_, i) => [`k${i}`, i]));
  const next = replaced(base, new Map([["k7", -7], ["k900", -900]]));
  assert.ok(!(next instanceof Map), "a layer over the map, not a rebuilt one");
  assert.equal(next.size, 1000);
  assert.equal(next.get("k7"), -7);
  assert.equal(next.get("k8"), 8);
  assert.equal(next.get("nope"), undefined);
  assert.ok(next.has("k900") && !next.has("nope"));
  const want = [...base].map(([k, v]) => [k, k === "k7" ? -7 : k === "k900" ? -900 : v]);
  assert.deepEqual(entries(next), want, "in the map's order");
  assert.deepEqual([...next.keys()], [...base.keys()]);
  assert.deepEqual([...next.values()], want.map(([, v]) => v));
  const seen: [string, number][] = [];
  next.forEach((v, k, m) => {
    assert.equal(m, next);
    seen.push([k, v]);
  });
  assert.deepEqual(seen, want);
  assert.equal(base.get("k7"), 7, "the older map is never changed");
  assert.equal(replaced(base, new Map()), base, "no change: the map itself");
});

Deno.test("replaced: layers do not pile up; many changes give a plain map with every value", () => {
  const base = new Map(Array.from({ length: 400 }, (_, i) => [`k${i}`, 0]));
  const model = new Map(base);
  let map: ReadonlyMap<string, number> = base;
  const older: [ReadonlyMap<string, number>, [string, number][]][] = [];
  for (let round = 1; round <= 60; round++) {
    const key = `k${(round * 37) % 400}`;
    model.set(key, round);
    older.push([map, entries(map)]);
    map = replaced(map, new Map([[key, round]]));
    assert.deepEqual(entries(map), [...model], `round ${round}`);
  }
  // 16 + √400 = 36 replaced values at most in a layer: past that the map is made whole.
  assert.ok(older.some(([m]) => m instanceof Map && m !== base), "flattened on the way");
  for (const [m, was] of older) assert.deepEqual(entries(m), was, "every older map as it was");
});
