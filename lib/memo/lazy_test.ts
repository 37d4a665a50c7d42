import assert from "node:assert/strict";
import { Lazy } from "./lazy.ts";

Deno.test("lazy: loads on the first get only, shared by every caller; peek never loads", async () => {
  let loads = 0;
  const lazy = new Lazy(() => Promise.resolve(++loads));
  assert.equal(lazy.peek(), undefined);
  assert.equal(loads, 0);
  const [a, b] = await Promise.all([lazy.get(), lazy.get()]);
  assert.deepEqual([a, b, await lazy.get(), lazy.peek(), loads], [1, 1, 1, 1, 1]);
});

Deno.test("lazy: a failed load is tried again by the next get", async () => {
  let loads = 0;
  const lazy = new Lazy(() => ++loads === 1 ? Promise.reject(new Error("no")) : Promise.resolve(7));
  await assert.rejects(lazy.get(), /no/);
  assert.equal(lazy.peek(), undefined);
  assert.equal(await lazy.get(), 7);
  assert.equal(loads, 2);
});
