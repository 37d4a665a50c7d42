import assert from "node:assert/strict";
import {
  type HTTPRouteShape,
  parseRouteRecord,
  producerRouteEntries,
  producerRouteRecord,
} from "./route_record.ts";
import { importedRoute, importedRoutes } from "./route_import.ts";

const split: HTTPRouteShape = {
  metadata: { namespace: "shop", name: "split", creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: {
    parentRefs: [
      { group: "", kind: "Service", name: "web", port: 8080 },
      { group: "", kind: "Service", name: "internal" }, // not exported
      { group: "", kind: "Service", name: "web", namespace: "other" }, // a consumer route there
      { group: "gateway.networking.k8s.io", kind: "Gateway", name: "edge" },
    ],
    rules: [{
      backendRefs: [
        { group: "", kind: "Service", name: "web-v1", port: 8080, weight: 90 },
        { group: "", kind: "Service", name: "web-v2", port: 8080, weight: 10 },
      ],
    }],
  },
};
const exported = new Set(["shop/web", "shop/web-v1", "shop/web-v2", "other/web"]);

Deno.test("route record: only parentRefs to exported Services of the route's namespace", () => {
  const r = producerRouteRecord("b.eu", split, exported);
  assert.deepEqual(r, {
    version: 1,
    cluster: "b.eu",
    kind: "HTTPRoute",
    namespace: "shop",
    name: "split",
    created: "2026-01-01T00:00:00Z",
    parents: [{ name: "web", port: 8080 }],
    rules: split.spec!.rules,
  });
  assert.equal(producerRouteRecord("b.eu", split, new Set(["shop/internal2"])), undefined);
  // A consumer route (in the caller's namespace) is not published.
  const consumer: HTTPRouteShape = {
    metadata: { namespace: "c", name: "mine" },
    spec: { parentRefs: [{ kind: "Service", name: "web", namespace: "shop" }] },
  };
  assert.equal(producerRouteRecord("b.eu", consumer, exported), undefined);
});

Deno.test("route record: entries keyed routes/HTTPRoute/<ns>/<name>, read back equal", () => {
  const entries = producerRouteEntries("b.eu", [split, {
    metadata: { namespace: "shop", name: "none" },
    spec: { parentRefs: [{ name: "nope" }] },
  }], exported);
  assert.deepEqual([...entries.keys()], ["routes/HTTPRoute/shop/split"]);
  const value = entries.get("routes/HTTPRoute/shop/split")!;
  assert.deepEqual(parseRouteRecord(value), JSON.parse(value));
});

Deno.test("route record: malformed values and unknown versions are not read", () => {
  const good = JSON.parse(producerRouteEntries("b.eu", [split], exported).values().next().value!);
  const bad = [
    "not json",
    "[]",
    JSON.stringify({ ...good, version: 2 }),
    JSON.stringify({ ...good, kind: "GRPCRoute" }),
    JSON.stringify({ ...good, name: 7 }),
    JSON.stringify({ ...good, parents: [] }),
    JSON.stringify({ ...good, parents: [{ name: "web", port: "8080" }] }),
    JSON.stringify({ ...good, rules: {} }),
    JSON.stringify({ ...good, rules: [{ backendRefs: [{ port: 8080 }] }] }),
    JSON.stringify({ ...good, rules: [{ backendRefs: [{ name: "x", weight: -1 }] }] }),
    JSON.stringify({
      ...good,
      rules: [{ filters: [{ type: "RequestMirror", requestMirror: {} }] }],
    }),
    JSON.stringify({ ...good, hostnames: [1] }),
  ];
  for (const v of bad) assert.equal(parseRouteRecord(v), undefined, v);
  assert.ok(parseRouteRecord(JSON.stringify(good)));
});

Deno.test("route import: parents become ServiceImports, Service backendRefs too", () => {
  const r = parseRouteRecord(
    JSON.stringify({
      ...producerRouteRecord("b.eu", split, exported),
      rules: [{
        filters: [{
          type: "RequestMirror",
          requestMirror: { backendRef: { name: "shadow", port: 80 } },
        }],
        backendRefs: [
          { name: "web-v1", port: 8080, weight: 90 },
          { group: "example.com", kind: "Bucket", name: "b" },
        ],
      }],
    }),
  )!;
  const route = importedRoute(r);
  assert.equal(route.metadata.name, "split.b.eu");
  assert.equal(route.metadata.namespace, "shop");
  assert.equal(route.metadata.creationTimestamp, "2026-01-01T00:00:00Z");
  assert.deepEqual(route.spec.parentRefs, [
    { group: "multicluster.x-k8s.io", kind: "ServiceImport", name: "web", port: 8080 },
  ]);
  assert.deepEqual(route.spec.rules, [{
    filters: [{
      type: "RequestMirror",
      requestMirror: {
        backendRef: {
          name: "shadow",
          port: 80,
          group: "multicluster.x-k8s.io",
          kind: "ServiceImport",
        },
      },
    }],
    backendRefs: [
      {
        name: "web-v1",
        port: 8080,
        weight: 90,
        group: "multicluster.x-k8s.io",
        kind: "ServiceImport",
      },
      { group: "example.com", kind: "Bucket", name: "b" },
    ],
  }]);
});

Deno.test("route import: every good record once, sorted; the malformed counted", () => {
  const entries = producerRouteEntries("b.eu", [split], exported);
  const other = producerRouteEntries("a.eu", [split], exported);
  const { routes, skipped } = importedRoutes([
    ...entries.values(),
    "{",
    ...other.values(),
    JSON.stringify({ version: 1 }),
  ]);
  assert.equal(skipped, 2);
  assert.deepEqual(routes.map((r) => r.metadata.name), ["split.a.eu", "split.b.eu"]);
});
