/**
 * ResolveState: two resolvers in one process (an edge config and a mesh config, resolved in
 * turn) each keep their memo hit rate, because each owns its state; sharing one state between
 * the two alternating inputs is what a module-level memo did, and it loses the hits.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readYamlDocsStrict } from "../testing/golden.ts";
import { resolve } from "./resolve.ts";
import { ResolveState } from "./state.ts";
import type { KubeObject } from "./types.ts";

const dir = new URL("./testdata/", import.meta.url);

function load(name: string): KubeObject[] {
  return readYamlDocsStrict(fileURLToPath(new URL(`${name}.in.yaml`, dir))) as KubeObject[];
}

const edge = load("basic_http");
const mesh = load("mesh_producer_consumer");

/** Misses (hits) of the route memos (attachment, conversion, status) so far. */
const misses = (s: ResolveState) => {
  const st = s.stats();
  return st.attach.misses + st.meshAttach.misses + st.convertEdge.misses + st.convertMesh.misses +
    st.statuses.misses;
};
const hits = (s: ResolveState) => {
  const st = s.stats();
  return st.attach.hits + st.meshAttach.hits + st.convertEdge.hits + st.convertMesh.hits +
    st.statuses.hits;
};

Deno.test("state: interleaved resolvers with their own states keep every route memo hit", () => {
  const a = new ResolveState(), b = new ResolveState();
  resolve(edge, {}, a);
  resolve(mesh, {}, b);
  const coldA = misses(a), coldB = misses(b);
  assert.ok(coldA > 0 && coldB > 0, "the first resolves compute");
  for (let round = 0; round < 5; round++) {
    resolve(edge, {}, a);
    resolve(mesh, {}, b);
  }
  assert.equal(misses(a), coldA, "edge resolver: no miss after the first resolve");
  assert.equal(misses(b), coldB, "mesh resolver: no miss after the first resolve");
  assert.equal(hits(a), coldA * 5, "edge resolver: every lookup of a round hits");
  assert.equal(hits(b), coldB * 5, "mesh resolver: every lookup of a round hits");
  assert.equal(a.stats().admit.misses, edge.length, "each object admitted once");
});

Deno.test("state: one state shared by two alternating inputs loses its hits (why it is owned)", () => {
  const shared = new ResolveState();
  resolve(edge, {}, shared);
  resolve(mesh, {}, shared);
  const cold = misses(shared);
  for (let round = 0; round < 5; round++) {
    resolve(edge, {}, shared);
    resolve(mesh, {}, shared);
  }
  assert.ok(misses(shared) >= cold * 5, `conversions and attachments redone: ${misses(shared)}`);
});

Deno.test("state: a warm resolve equals a cold one, and the warm state is not mutated by it", () => {
  const s = new ResolveState();
  const first = resolve(edge, {}, s);
  const copy = structuredClone(first);
  const again = resolve(edge, {}, s);
  assert.deepEqual(again, resolve(structuredClone(edge)));
  assert.deepEqual(first, copy, "an earlier result is not changed by a later resolve");
});
