/**
 * ResolveState: two resolvers in one process (an edge config and a mesh config, resolved in
 * turn) each keep their memo hit rate, because each owns its state; sharing one state between
 * the two alternating inputs is what a module-level memo did, and it loses the hits.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { readYamlDocsStrict } from "../../../testbed/golden.ts";
import { resolve } from "../resolve.ts";
import { ResolveState } from "./mod.ts";
import type { KubeObject } from "../types.ts";

const dir = new URL("../testdata/", import.meta.url);

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
  // Gateway attachment is remembered for the last input's Gateways: each switch redoes it.
  // (Conversions survive the switch: their lookups give the same objects again.)
  const redone = misses(shared) - cold;
  assert.ok(redone >= 5 * 2, `attachments redone on every switch: ${redone}`);
  assert.ok(shared.stats().attach.misses >= 5 * 2, "edge attachment redone on every switch");
});

/** Service `name` in namespace mesh with a producer HTTPRoute on port 80 to itself. */
function meshService(name: string): KubeObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: "mesh" },
      spec: { ports: [{ name: "http", port: 80 }] },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name, namespace: "mesh", creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        parentRefs: [{ group: "", kind: "Service", name, port: 80 }],
        rules: [{ backendRefs: [{ name, port: 80 }] }],
      },
    },
  ];
}

Deno.test("state: replacing one Service redoes only the routes that looked it up", () => {
  const names = ["a", "b", "c", "d"];
  const objects = names.flatMap(meshService);
  const s = new ResolveState();
  resolve(objects, {}, s);
  const before = s.stats();
  assert.equal(before.convertMesh.misses, names.length, "each route converted once, cold");
  // A new (equal) Service object for `b`: a changed Service, as a source hands it over.
  const edited = objects.map((o) =>
    o.kind === "Service" && o.metadata.name === "b" ? structuredClone(o) : o
  );
  const warm = resolve(edited, {}, s);
  const after = s.stats();
  assert.equal(after.convertMesh.misses - before.convertMesh.misses, 1, "only b's route converts");
  assert.equal(after.convertMesh.hits - before.convertMesh.hits, names.length - 1);
  assert.equal(after.meshAttach.misses - before.meshAttach.misses, 1, "only b's route attaches");
  assert.deepEqual(warm, resolve(structuredClone(edited)), "and the result is a cold resolve's");
  // Removing `c`'s Service: its route's lookup now finds nothing, so it is redone (not found).
  const without = edited.filter((o) => !(o.kind === "Service" && o.metadata.name === "c"));
  const gone = resolve(without, {}, s);
  assert.equal(s.stats().meshAttach.misses - after.meshAttach.misses, 1, "c's route re-attaches");
  assert.deepEqual(gone, resolve(structuredClone(without)));
});

Deno.test("state: a warm resolve equals a cold one, and the warm state is not mutated by it", () => {
  const s = new ResolveState();
  const first = resolve(edge, {}, s);
  const copy = structuredClone(first);
  const again = resolve(edge, {}, s);
  assert.deepEqual(again, resolve(structuredClone(edge)));
  assert.deepEqual(first, copy, "an earlier result is not changed by a later resolve");
});
