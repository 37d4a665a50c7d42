/**
 * Endpoint churn in another cluster costs the edge one ClusterLoadAssignment: with 100
 * ServiceImport backends, a new ClusterSetEndpoints object for one import (the registry source's
 * way of saying "this service's endpoints changed") takes the endpoint fast path and encodes that
 * import's assignment alone. Without resolve's memo of import endpoints, or without the fast path
 * keeping unchanged assignments, every import's is made and encoded again and this test fails.
 */
import assert from "node:assert/strict";
import { edgeHarness, endpointsOf, importsConfig } from "./_import_endpoints_test_utils.ts";

const IMPORTS = 100;

Deno.test("edge: one import's endpoints changed encodes that import's ClusterLoadAssignment alone", async () => {
  const { apply: applyObjects, claEncoded, served } = edgeHarness();
  const base = importsConfig(IMPORTS);
  const endpoints = Array.from({ length: IMPORTS }, (_, s) => endpointsOf(s));
  const apply = () => applyObjects([...base, ...endpoints]);

  await apply();
  assert.equal(served().items.size, IMPORTS);
  assert.equal(claEncoded(), IMPORTS);
  const before = served();

  for (const [i, s] of [7, 42, 7].entries()) {
    const encoded = claEncoded();
    endpoints[s] = endpointsOf(s, `10.250.0.${i}`);
    await apply();
    assert.equal(claEncoded() - encoded, 1, `change ${i}: one ClusterLoadAssignment encoded`);
    const name = `svc-${s}.team.svc.clusterset.local:80`;
    const cla = JSON.stringify(served().items.get(name)?.resource);
    assert.match(cla, new RegExp(`"10\\.250\\.0\\.${i}"`), `${name} serves the new address`);
  }
  const after = served();
  for (const [name, item] of after.items) {
    if (/^svc-(7|42)\./.test(name)) continue;
    assert.equal(item, before.items.get(name), `${name}: the same encoded resource`);
  }
});
