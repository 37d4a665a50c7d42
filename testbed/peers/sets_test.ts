import assert from "node:assert/strict";
import { peerNames } from "./mod.ts";
import { expandPeerNames, peerSets } from "./sets.ts";

Deno.test("peer sets: every member is a known peer, once; no set is named like a peer", () => {
  for (const [name, peers] of Object.entries(peerSets)) {
    assert.ok(!peerNames.includes(name) && name !== "all", `set ${name} shadows a peer`);
    assert.deepEqual(peers.filter((p) => !peerNames.includes(p)), [], `set ${name}: unknown`);
    assert.equal(new Set(peers).size, peers.length, `set ${name}: a peer listed twice`);
  }
});

Deno.test("peer sets: a set name expands to its peers, all to every peer, names stay", () => {
  assert.deepEqual(expandPeerNames(["test"], peerNames), peerSets.test);
  assert.deepEqual(expandPeerNames(["all"], peerNames), peerNames);
  assert.deepEqual(expandPeerNames(["envoy", "test", "curl"], peerNames), [
    ...peerSets.test,
    "curl",
  ]);
  assert.deepEqual(expandPeerNames(["curl", "curl"], peerNames), ["curl"]);
});
