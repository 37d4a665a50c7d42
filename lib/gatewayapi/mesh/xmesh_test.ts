import assert from "node:assert/strict";
import { resolve } from "../resolve.ts";
import type { KubeObject } from "../types.ts";
import { MESH_CONTROLLER_NAME } from "./attachment.ts";
import { MESH_FEATURES } from "./xmesh.ts";

const xmesh = (name: string, controllerName: string): KubeObject => ({
  apiVersion: "gateway.networking.x-k8s.io/v1alpha1",
  kind: "XMesh",
  metadata: { name, generation: 3 },
  spec: { controllerName },
});

const now = "2026-12-05T00:00:00Z";

Deno.test("XMesh: ours accepted with the mesh's features, another controller's left alone", () => {
  const objects = [xmesh("aether", MESH_CONTROLLER_NAME), xmesh("other", "example.com/mesh")];
  const r = resolve(objects, { now, meshFeatures: MESH_FEATURES });
  assert.deepEqual(r.problems, []);
  const mine = r.statuses.filter((s) => s.kind === "XMesh");
  assert.deepEqual(mine.map((s) => s.name), ["aether"]);
  const status = mine[0].status as {
    conditions: { type: string; status: string; reason: string; observedGeneration: number }[];
    supportedFeatures: { name: string }[];
  };
  assert.deepEqual(
    status.conditions.map((c) => [c.type, c.status, c.reason, c.observedGeneration]),
    [["Accepted", "True", "Accepted", 3], ["Programmed", "True", "Programmed", 3]],
  );
  const names = status.supportedFeatures.map((f) => f.name);
  assert.deepEqual(names, [...names].sort(), "sorted, as the CRD requires");
  assert.ok(names.includes("Mesh") && names.includes("MeshClusterIPMatching"));
});

Deno.test("XMesh: without capture no feature is claimed, and the message says why", () => {
  const r = resolve([xmesh("aether", MESH_CONTROLLER_NAME)], { now });
  const status = r.statuses.find((s) => s.kind === "XMesh")!.status as {
    conditions: { type: string; message: string }[];
    supportedFeatures: unknown[];
  };
  assert.deepEqual(status.supportedFeatures, []);
  assert.match(status.conditions[0].message, /transparent capture is off/);
});

Deno.test("XMesh: one that breaks its CRD (no controllerName) is refused, not accepted", () => {
  const bad: KubeObject = { ...xmesh("bad", MESH_CONTROLLER_NAME), spec: {} };
  const r = resolve([bad], { now });
  assert.equal(r.statuses.filter((s) => s.kind === "XMesh").length, 0);
  assert.ok(r.problems.some((p) => p.kind === "XMesh" && p.name === "bad"), `${r.problems}`);
});
