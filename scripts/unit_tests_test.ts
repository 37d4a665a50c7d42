/**
 * The unit set stays exact: no unit test reaches a module that ensures a peer (itself or through
 * a harness, at any depth), every test kept out of it for a peer does, and the few kept out for
 * their time do not.
 */
import assert from "node:assert/strict";
import { PEER_TESTS, peerChains, rootTestFiles, SLOW_TESTS, unitTestFiles } from "./unit_tests.ts";

const chains = await peerChains(rootTestFiles());

Deno.test("unit tests: none ensures a peer, itself or through what it imports", () => {
  const units = unitTestFiles();
  assert.ok(units.length > 0);
  const peers = units.flatMap((f) => {
    const chain = chains.get(f);
    return chain ? [`${chain.join(" → ")} ensures a peer: list ${f} in PEER_TESTS`] : [];
  });
  assert.deepEqual(peers, []);
});

Deno.test("unit tests: each test kept out of the set is a test that ensures a peer", () => {
  const all = new Set(rootTestFiles());
  assert.deepEqual(PEER_TESTS.filter((f) => !all.has(f)), [], "not a test file under UNIT_ROOTS");
  assert.deepEqual(
    PEER_TESTS.filter((f) => !chains.get(f)),
    [],
    "ensures no peer: a unit test (drop it from PEER_TESTS)",
  );
  assert.deepEqual([...PEER_TESTS].sort(), PEER_TESTS, "PEER_TESTS is sorted");
});

Deno.test("unit tests: each slow test kept out is a test that ensures no peer", () => {
  const all = new Set(rootTestFiles());
  assert.deepEqual(SLOW_TESTS.filter((f) => !all.has(f)), [], "not a test file under UNIT_ROOTS");
  const peers = SLOW_TESTS.filter((f) => chains.get(f));
  assert.deepEqual(peers, [], "ensures a peer: move it to PEER_TESTS");
});
