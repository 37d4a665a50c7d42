import assert from "node:assert/strict";
import { plannedRouteEntries, routeShape } from "./routes.ts";

const route = (name: string, parent: string, ns = "shop") =>
  routeShape({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { namespace: ns, name, creationTimestamp: "2026-01-01T00:00:00Z", uid: "x" },
    spec: {
      parentRefs: [{ group: "", kind: "Service", name: parent }],
      rules: [{ backendRefs: [{ name: "web-v1", port: 8080, weight: 90 }] }],
    },
    status: { parents: [] },
  });
const published = () =>
  new Map([
    ["exports/shop/web", "{}"],
    ["eps/shop/web/p1", "{}"],
    ["exports/shop/api", "{}"],
  ]);

Deno.test("mcs routes: producer routes of exported Services, keyed under routes/", () => {
  const out = plannedRouteEntries({
    cluster: "b.eu",
    published: published(),
    routes: [route("split", "web"), route("other", "db"), route("mine", "web", "c")],
    current: [],
  });
  assert.deepEqual([...out.keys()], ["routes/HTTPRoute/shop/split"]);
  const r = JSON.parse(out.get("routes/HTTPRoute/shop/split")!);
  assert.equal(r.cluster, "b.eu");
  assert.deepEqual(r.parents, [{ name: "web" }]);
  assert.deepEqual(r.rules, [{ backendRefs: [{ name: "web-v1", port: 8080, weight: 90 }] }]);
});

Deno.test("mcs routes: the route or its export gone, the record goes", () => {
  const routes = [route("split", "web")];
  assert.equal(
    plannedRouteEntries({ cluster: "b.eu", published: published(), routes: [], current: [] }).size,
    0,
  );
  const unexported = new Map([["exports/shop/api", "{}"]]);
  assert.equal(
    plannedRouteEntries({ cluster: "b.eu", published: unexported, routes, current: [] }).size,
    0,
  );
});

Deno.test("mcs routes: before the routes are listed the published ones stay (exported only)", () => {
  const current = plannedRouteEntries({
    cluster: "b.eu",
    published: published(),
    routes: [route("split", "web"), route("a", "api")],
    current: [],
  });
  const all = [...current, ["exports/shop/web", "{}"] as const, ["routes/x", "garbage"] as const];
  const kept = plannedRouteEntries({
    cluster: "b.eu",
    published: published(),
    routes: undefined,
    current: all,
  });
  assert.deepEqual([...kept.keys()].sort(), [
    "routes/HTTPRoute/shop/a",
    "routes/HTTPRoute/shop/split",
  ]);
  const onlyWeb = new Map([["exports/shop/web", "{}"]]);
  const less = plannedRouteEntries({
    cluster: "b.eu",
    published: onlyWeb,
    routes: undefined,
    current: all,
  });
  assert.deepEqual([...less.keys()], ["routes/HTTPRoute/shop/split"]);
});
