import assert from "node:assert/strict";
import { admit } from "./admit.ts";
import { resolve } from "../resolve.ts";
import { ADMISSION_KINDS } from "../read_kinds.ts";
import type { KubeObject, Problem } from "../types.ts";

const GW = "gateway.networking.k8s.io/v1";

/** An HTTPRoute the API server would refuse (an Exact path must be absolute: a CEL rule). */
const relativePath = (): KubeObject => ({
  apiVersion: GW,
  kind: "HTTPRoute",
  metadata: { name: "r", namespace: "app" },
  spec: {
    parentRefs: [{ group: "gateway.networking.k8s.io", kind: "Gateway", name: "gw" }],
    rules: [{ matches: [{ path: { type: "Exact", value: "relative" } }] }],
  },
});

Deno.test("admit: objects from the API server (admitted) are taken as they are, not walked again", () => {
  const route = relativePath();
  const problems: Problem[] = [];
  assert.deepEqual(admit([route], problems, ADMISSION_KINDS), []);
  assert.equal(problems.length, 1);
  assert.match(problems[0].message, /must be an absolute path/);

  const again: Problem[] = [];
  const out = admit([route], again, ADMISSION_KINDS, true);
  assert.equal(out[0], route, "the same object, no defaulted copy");
  assert.deepEqual(again, []);

  // Without `admitted`, an object missing its defaults is copied with them; with it, not.
  const bare: KubeObject = {
    apiVersion: GW,
    kind: "HTTPRoute",
    metadata: { name: "b", namespace: "app" },
    spec: {},
  };
  assert.notEqual(admit([bare], [], ADMISSION_KINDS)[0], bare);
  assert.equal(admit([bare], [], ADMISSION_KINDS, true)[0], bare);
});

Deno.test("admit: admitted still reports kinds and versions aether does not know", () => {
  const problems: Problem[] = [];
  const out = admit(
    [
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", namespace: "a" } },
      { ...relativePath(), apiVersion: "gateway.networking.k8s.io/v1alpha1" },
    ],
    problems,
    ADMISSION_KINDS,
    true,
  );
  assert.deepEqual(out, []);
  assert.deepEqual(problems.map((p) => `${p.kind} ${p.field}`), [
    "ConfigMap kind",
    "HTTPRoute apiVersion",
    "HTTPRoute spec.rules[0].matches[0].path",
  ]);
});

Deno.test("resolve: admitted skips admission, so the route is served as the API server kept it", () => {
  const objects: KubeObject[] = [
    {
      apiVersion: GW,
      kind: "GatewayClass",
      metadata: { name: "c" },
      spec: { controllerName: "gateway.aether.io/edge" },
    },
    {
      apiVersion: GW,
      kind: "Gateway",
      metadata: { name: "gw", namespace: "app" },
      spec: {
        gatewayClassName: "c",
        listeners: [{
          name: "http",
          port: 8080,
          protocol: "HTTP",
          allowedRoutes: { namespaces: { from: "Same" } },
        }],
      },
    },
    relativePath(),
  ];
  const routeStatus = (admitted?: boolean) => {
    const r = resolve(objects, { admitted });
    return {
      served: r.statuses.some((s) => s.kind === "HTTPRoute"),
      problems: r.problems.map((p) => p.kind),
    };
  };
  assert.deepEqual(routeStatus(), { served: false, problems: ["HTTPRoute"] });
  assert.deepEqual(routeStatus(true), { served: true, problems: [] });
});
