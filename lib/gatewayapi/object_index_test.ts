/** indexObjects's age order, remembered between calls, follows ages that change. */
import assert from "node:assert/strict";
import { indexObjects, sortByAge } from "./object_index.ts";
import type { KubeObject } from "./types.ts";

const route = (name: string, creationTimestamp: string): KubeObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { namespace: "default", name, creationTimestamp },
  spec: {},
});

const names = (objects: KubeObject[]) => objects.map((o) => o.metadata.name);

Deno.test("indexed: an edit that keeps or changes an object's age keeps age order", () => {
  let objects = ["a", "b", "c", "d"].map((n, i) => route(n, `2026-01-0${i + 1}T00:00:00Z`));
  assert.deepEqual(names(indexObjects(objects, ["HTTPRoute"]).indexed.routes.get("HTTPRoute")!), [
    "a",
    "b",
    "c",
    "d",
  ]);
  // Same age: the remembered order holds, with the new object in it.
  const same = route("b", "2026-01-02T00:00:00Z");
  objects = objects.with(1, same);
  const kept = indexObjects(objects, ["HTTPRoute"]).indexed.routes.get("HTTPRoute")!;
  assert.deepEqual(names(kept), ["a", "b", "c", "d"]);
  assert.equal(kept[1], same);
  // Older and newer: sorted again.
  objects = objects.with(3, route("d", "2025-01-01T00:00:00Z"));
  objects = objects.with(0, route("a", "2027-01-01T00:00:00Z"));
  const moved = indexObjects(objects, ["HTTPRoute"]).indexed.routes.get("HTTPRoute")!;
  assert.deepEqual(names(moved), ["d", "b", "c", "a"]);
  assert.deepEqual(moved, sortByAge(objects));
  // Reordered input with equal ages: ties are broken by namespace/name, as a fresh sort does.
  const tied = ["x", "w", "v"].map((n) => route(n, "2026-01-01T00:00:00Z"));
  assert.deepEqual(names(indexObjects(tied, ["HTTPRoute"]).indexed.routes.get("HTTPRoute")!), [
    "v",
    "w",
    "x",
  ]);
  assert.deepEqual(
    names(indexObjects(tied.toReversed(), ["HTTPRoute"]).indexed.routes.get("HTTPRoute")!),
    [
      "v",
      "w",
      "x",
    ],
  );
});
