/**
 * The route-kind registry is the only seam a new route kind needs: a test-only kind (one
 * conversion function and one list entry, plus its catalogue entry where aether's catalogue has
 * the CRD's) attaches to Gateways and Services, resolves its backends, lands in the IR and gets
 * status through the shared code.
 */
import assert from "node:assert/strict";
import { resolve } from "../resolve.ts";
import { ROUTE_KINDS } from "./registry.ts";
import { CATALOGUE } from "../catalogue/mod.ts";
import { supportedFeatures } from "../gateways.ts";
import type { KubeObject } from "../types.ts";
import { PROBE_ENTRY, PROBE_ROUTE, probeParents } from "./_test_utils.ts";

const objects: KubeObject[] = [
  ...probeParents(),
  {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "ProbeRoute",
    metadata: { name: "probe", namespace: "app", generation: 4 },
    spec: {
      parentRefs: [{ name: "edge" }, { group: "", kind: "Service", name: "web" }],
      path: "/probe",
      backendRefs: [{ name: "web", port: 80 }, { name: "missing", port: 80 }],
    },
  },
];

Deno.test("route kinds: a test-only kind registered in the list is served end to end", () => {
  const kinds = [...ROUTE_KINDS, PROBE_ROUTE];
  const { ir, mesh, statuses, problems } = resolve(objects, {
    routeKinds: kinds,
    catalogue: [...CATALOGUE, PROBE_ENTRY],
  });
  assert.deepEqual(problems, []);

  // Edge: the listener lists the kind, the route is placed and its backend's cluster made.
  const chain = ir.listeners[0].filterChains[0];
  assert.equal(chain.kind, "http");
  const routes = chain.kind === "http" ? chain.virtualHosts.flatMap((v) => v.routes) : [];
  assert.deepEqual(routes.map((r) => r.name), ["ProbeRoute/app/probe/rule/0/match/0"]);
  const action = routes[0].action;
  assert.equal(action.kind, "forward");
  assert.deepEqual(
    action.kind === "forward" ? action.backends.map((b) => [b.cluster, !!b.invalid]) : [],
    [["web.aether.internal", false], ["aether.invalid/app/missing/80", true]],
  );
  assert.deepEqual(ir.clusters.map((c) => c.name), ["web.aether.internal"]);

  // Mesh: the Service parent makes it a producer route of web.
  const port = mesh.services.find((s) => s.name === "web")!.ports[0];
  assert.deepEqual(port.producerRoutes.map((r) => r.name), ["ProbeRoute/app/probe/rule/0/match/0"]);

  // Status: shared attachment, ResolvedRefs from the shared backends, supportedKinds, features.
  const gw = statuses.find((s) => s.kind === "Gateway")!.status as {
    listeners: { supportedKinds: { kind: string }[]; attachedRoutes: number }[];
  };
  assert.deepEqual(gw.listeners[0].supportedKinds.map((k) => k.kind), [
    "HTTPRoute",
    "GRPCRoute",
    "ProbeRoute",
  ]);
  assert.equal(gw.listeners[0].attachedRoutes, 1);
  const route = statuses.find((s) => s.kind === "ProbeRoute")!.status as {
    parents: {
      controllerName: string;
      conditions: { type: string; status: string; reason: string }[];
    }[];
  };
  assert.deepEqual(
    route.parents.map((
      p,
    ) => [p.controllerName, p.conditions.map((c) => `${c.type}=${c.status}/${c.reason}`)]),
    [
      ["gateway.aether.io/edge", ["Accepted=True/Accepted", "ResolvedRefs=False/BackendNotFound"]],
      ["gateway.aether.io/mesh", ["Accepted=True/Accepted", "ResolvedRefs=False/BackendNotFound"]],
    ],
  );
  const gc = statuses.find((s) => s.kind === "GatewayClass")!.status as {
    supportedFeatures: { name: string }[];
  };
  assert.deepEqual(gc.supportedFeatures.map((f) => f.name), supportedFeatures(kinds));
  assert.ok(gc.supportedFeatures.some((f) => f.name === "ProbeRoute"));
});

Deno.test("route kinds: a kind not in the list is not served (the list is the only seam)", () => {
  const { ir, statuses, problems } = resolve(objects);
  assert.deepEqual(problems.map((p) => p.kind), ["ProbeRoute"]);
  const chain = ir.listeners[0].filterChains[0];
  assert.equal(chain.kind === "http" ? chain.virtualHosts.length : -1, 0);
  assert.equal(statuses.some((s) => s.kind === "ProbeRoute"), false);
});
