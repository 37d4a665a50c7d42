/**
 * Test support: a route kind of the tests' own, ProbeRoute — its `RouteKindDef` (one conversion
 * function) and its kind-catalogue entry (what its CRD would give) — for the tests that show a
 * new kind needs only those two (routes/registry_test.ts, catalogue/new_kind_test.ts) — and the
 * objects a ProbeRoute attaches to.
 * @module
 */
import { RuleContext } from "./rule_common.ts";
import type { RouteKindDef } from "./kind.ts";
import type { CatalogueKind } from "../catalogue/mod.ts";
import type { HTTPBackendRef, KubeObject } from "../types.ts";
import { gateway, gatewayClass } from "../../../testbed/fixtures/objects.ts";

/** A test-only route kind: `spec.path` (exact) forwards to `spec.backendRefs`. */
export const PROBE_ROUTE: RouteKindDef = {
  kind: "ProbeRoute",
  protocols: ["HTTP"],
  chain: "http",
  http2Backends: false,
  features: ["ProbeRoute"],
  convert(backends, route: { metadata: { namespace: string; name: string }; spec: unknown }, mesh) {
    const spec = route.spec as { path: string; backendRefs: HTTPBackendRef[] };
    const ctx = new RuleContext(
      backends,
      "ProbeRoute",
      route.metadata.namespace,
      route.metadata.name,
      {
        mesh,
      },
    );
    const forward = ctx.weightedBackends(spec.backendRefs, "spec.backendRefs");
    const match = {
      path: { type: "Exact" as const, value: spec.path },
      headers: [],
      queryParams: [],
    };
    return ctx.finish([{
      matches: [{
        name: `${ctx.rulePrefix(0, undefined)}/match/0`,
        match,
        key: [0, spec.path.length],
      }],
      action: () => ({ kind: "forward", backends: forward, mirrors: [] }),
    }]);
  },
};

/** Where ProbeRoute lives in the API (what a CRD would give). */
export const PROBE_ENTRY: CatalogueKind = {
  kind: "ProbeRoute",
  group: "gateway.networking.k8s.io",
  versions: ["v1"],
  storage: "v1",
  plural: "proberoutes",
  namespaced: true,
};

/** What a ProbeRoute in `app` attaches to: aether's class, Gateway `edge` (HTTP 8080), Service `web`. */
export function probeParents(): KubeObject[] {
  return [
    gatewayClass(),
    gateway("edge", [{ name: "http", port: 8080, protocol: "HTTP" }], "app"),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: "app" },
      spec: { ports: [{ name: "http", port: 80 }] },
    },
  ];
}
