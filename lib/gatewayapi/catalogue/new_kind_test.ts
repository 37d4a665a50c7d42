/**
 * A new route kind is its `RouteKindDef` plus its catalogue entry, and nothing else: given the two
 * (as parameters, the way a caller passes them), admission admits and validates the kind, the
 * API-server source reads it, resolve serves it and the controller's status plan shares its
 * `parents[]` with other controllers — no list elsewhere to add it to.
 */
import assert from "node:assert/strict";
import { admissionKinds } from "../admission/mod.ts";
import { admitObject, validateObject } from "../admission/mod.ts";
import { ADMISSION_KINDS, admissionFor } from "../read_kinds.ts";
import { resolve } from "../resolve.ts";
import { ROUTE_KINDS } from "../routes/registry.ts";
import { PROBE_ENTRY, PROBE_ROUTE, probeParents } from "../routes/_test_utils.ts";
import type { KubeObject } from "../types.ts";
import { CATALOGUE, readKinds } from "./mod.ts";
import {
  collectionPath,
  crdName,
  defaultKinds,
  kindSpecs,
  objectPath,
  servedVersion,
} from "../../kube/mod.ts";
import { nodeKinds } from "../../../agent/config_source.ts";
import { planStatus } from "../../../controller/mod.ts";

const routeKinds = [...ROUTE_KINDS, PROBE_ROUTE];
const catalogue = [...CATALOGUE, PROBE_ENTRY];

const probe = (extra: Partial<KubeObject> = {}): KubeObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "ProbeRoute",
  metadata: { name: "probe", generation: 2, resourceVersion: "9" },
  spec: { parentRefs: [{ name: "edge" }], path: "/p", backendRefs: [{ name: "web", port: 80 }] },
  ...extra,
});

Deno.test("new kind: admission admits and validates it by its catalogue entry", () => {
  const kinds = admissionKinds(readKinds(routeKinds), catalogue);
  const { obj, problems } = admitObject(probe(), kinds);
  assert.deepEqual(problems, []);
  assert.equal(obj.metadata.namespace, "default", "namespaced, as its entry says");
  assert.deepEqual(
    validateObject(probe({ apiVersion: "gateway.networking.k8s.io/v2" }), kinds).map((p) =>
      `${p.field}: ${p.message}`
    ),
    [
      'apiVersion: unsupported apiVersion "gateway.networking.k8s.io/v2" for ProbeRoute: use ' +
      "gateway.networking.k8s.io/v1",
    ],
  );
  assert.deepEqual(
    validateObject(probe({ metadata: { name: "Bad" } }), kinds).map((p) => p.field),
    [
      "metadata.name",
    ],
  );
  // resolve's table is this one when its options bring the kind, aether's when they do not.
  assert.ok(Object.hasOwn(admissionFor(routeKinds, catalogue), "ProbeRoute"));
  assert.equal(admissionFor(ROUTE_KINDS), ADMISSION_KINDS);
  assert.equal(admissionFor(ROUTE_KINDS.slice(0, 2)), ADMISSION_KINDS);
  assert.deepEqual(validateObject(probe(), ADMISSION_KINDS).map((p) => p.message), [
    'unsupported kind "ProbeRoute"',
  ]);
  // Without its entry there is nothing to admit it by.
  assert.throws(() => admissionKinds(readKinds(routeKinds)), /unknown kind ProbeRoute/);
});

Deno.test("new kind: the API-server source reads it at the collection its entry names", () => {
  const kinds = defaultKinds(routeKinds);
  assert.deepEqual(kinds.slice(6, 9), ["UDPRoute", "ProbeRoute", "ReferenceGrant"]);
  assert.ok(nodeKinds(routeKinds).includes("ProbeRoute"));
  const spec = kindSpecs(kinds, catalogue).find((s) => s.kind === "ProbeRoute")!;
  assert.deepEqual(spec, {
    kind: "ProbeRoute",
    group: "gateway.networking.k8s.io",
    versions: ["v1"],
    plural: "proberoutes",
    namespaced: true,
    crd: true,
  });
  assert.equal(crdName(spec), "proberoutes.gateway.networking.k8s.io");
  const version = servedVersion(spec, { name: crdName(spec), established: true, served: ["v1"] });
  assert.equal(version, "v1");
  assert.equal(collectionPath(spec, version!), "/apis/gateway.networking.k8s.io/v1/proberoutes");
  assert.equal(
    objectPath(spec, version!, "app", "probe", true),
    "/apis/gateway.networking.k8s.io/v1/namespaces/app/proberoutes/probe/status",
  );
  assert.throws(() => kindSpecs(kinds), /unknown kind ProbeRoute/);
});

Deno.test("new kind: resolve serves it; the status plan keeps others' parents[] entries", () => {
  const theirs = {
    parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "other" },
    controllerName: "example.com/other",
    conditions: [],
  };
  const objects: KubeObject[] = [
    ...probeParents(),
    probe({
      metadata: { name: "probe", namespace: "app", generation: 2, resourceVersion: "9" },
      status: { parents: [theirs] },
    }),
  ];
  const { ir, statuses, problems } = resolve(objects, { routeKinds, catalogue });
  assert.deepEqual(problems, []);
  const chain = ir.listeners[0].filterChains[0];
  const routes = chain.kind === "http" ? chain.virtualHosts.flatMap((v) => v.routes) : [];
  assert.deepEqual(routes.map((r) => r.name), ["ProbeRoute/app/probe/rule/0/match/0"]);

  const ours = (n: string) => n.startsWith("gateway.aether.io/");
  const now = "2026-01-01T00:00:00Z";
  const status = (kinds?: typeof routeKinds) =>
    planStatus(objects, statuses, now, ours, kinds).find((u) => u.target.kind === "ProbeRoute")!
      .status as { parents: { controllerName: string }[] };
  assert.deepEqual(status(routeKinds).parents.map((p) => p.controllerName), [
    "gateway.aether.io/edge",
    "example.com/other",
  ]);
  // Not a route kind to the plan: our status would replace the object's whole, theirs lost.
  assert.deepEqual(status().parents.map((p) => p.controllerName), ["gateway.aether.io/edge"]);
  // A route resolve no longer gives status loses our entries only.
  const live = probe({
    metadata: { name: "probe", namespace: "app", resourceVersion: "9" },
    status: { parents: [{ ...theirs, controllerName: "gateway.aether.io/edge" }, theirs] },
  });
  assert.deepEqual(planStatus([live], [], now, ours, routeKinds).map((u) => u.status), [
    { parents: [theirs] },
  ]);
});

Deno.test("new kind: a catalogue kind aether does not read is reported, as before", () => {
  const policy = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "BackendTLSPolicy",
    metadata: { name: "p", namespace: "app" },
    spec: {},
  };
  assert.deepEqual(resolve([policy]).problems.map((p) => `${p.kind} ${p.field}: ${p.message}`), [
    'BackendTLSPolicy kind: unsupported kind "BackendTLSPolicy"',
  ]);
  assert.deepEqual(
    resolve([policy], { admitted: true }).problems.map((p) => p.message),
    ['unsupported kind "BackendTLSPolicy"'],
  );
});
