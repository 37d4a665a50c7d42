/**
 * At 10,000 HTTPRoutes of exact hostnames the edge serves its listener's routes scoped (a
 * RouteConfiguration per host, chosen by a ScopedRouteConfiguration per hostname; translate's
 * scoped.ts), and an edit still costs one route's work: the edited host's table is the one
 * resource translated and encoded again; an added route adds its table and its scope; a removed
 * one encodes nothing. Without the scoped memo's positional walk every table would be made again.
 */
import assert from "node:assert/strict";
import { TypeUrl } from "./proto.ts";
import {
  edge10k,
  NOTHING,
  route,
  ROUTE_CONFIG,
  ROUTES,
  service,
  SERVICES,
} from "./_edge_10k_test_utils.ts";

Deno.test("edge at 10k routes, scoped: an edit, an added route and a removed one encode only what they touch", async (t) => {
  const { encoded, step, served, versions, routeAt, objects } = await edge10k();
  const tables = () => served().resources(TypeUrl.route).items;
  const scopes = () => served().resources(TypeUrl.scopedRoute).items;
  assert.equal(served().resources(TypeUrl.virtualHost).items.size, 0, "no VHDS");
  assert.equal(tables().size, ROUTES, "a table per host");
  assert.equal(scopes().size, ROUTES, "a scope per hostname");
  assert.deepEqual(encoded(), {
    ...NOTHING,
    Listener: 1,
    RouteConfiguration: ROUTES,
    ScopedRouteConfiguration: ROUTES,
    Cluster: SERVICES,
    ClusterLoadAssignment: SERVICES,
  });
  const hcm = JSON.stringify(
    served().resources(TypeUrl.listener).items.values().next().value!.resource,
  );
  assert.match(hcm, /"scoped_routes":\{"name":"http\.10080"/, "the listener takes scoped routes");
  assert.doesNotMatch(hcm, /"rds":/, "and no single route table");
  const scope = scopes().get(`${ROUTE_CONFIG}/app-0.example.com`)!.resource;
  assert.deepEqual(scope, {
    name: `${ROUTE_CONFIG}/app-0.example.com`,
    route_configuration_name: `${ROUTE_CONFIG}/app-0.example.com`,
    key: { fragments: [{ string_key: "app-0.example.com" }] },
  });

  await t.step("one route's header value: one RouteConfiguration", async () => {
    const before = versions();
    const { encoded, sink } = await step(objects().with(routeAt("route-0"), route(0, 1)));
    assert.deepEqual(encoded, { ...NOTHING, RouteConfiguration: 1 });
    assert.equal(sink.translateVirtualHosts, 1, "the edited virtual host alone translated");
    assert.equal(sink.encodeLists, 0, "every list encoded in place");
    const after = versions();
    assert.deepEqual(
      Object.keys(after).filter((k) => after[k] !== before[k]),
      ["RouteConfiguration"],
      "only the RouteConfiguration type's version moves",
    );
    const table = tables().get(`${ROUTE_CONFIG}/app-0.example.com`)!.resource;
    assert.match(JSON.stringify(table), /"e1"/, "the host's table has the new header value");
  });

  await t.step(
    "a route to a new Service: its table, its scope, its Cluster and endpoints",
    async () => {
      const { encoded } = await step([
        ...objects(),
        ...service("svc-new", 250),
        route(ROUTES, 0, ["svc-new"]),
      ]);
      assert.deepEqual(encoded, {
        ...NOTHING,
        RouteConfiguration: 1,
        ScopedRouteConfiguration: 1,
        Cluster: 1,
        ClusterLoadAssignment: 1,
      });
      assert.ok(scopes().has(`${ROUTE_CONFIG}/app-${ROUTES}.example.com`));
      assert.ok(tables().has(`${ROUTE_CONFIG}/app-${ROUTES}.example.com`));
    },
  );

  await t.step("a removed route: nothing encoded, its table and scope gone", async () => {
    const gone = `${ROUTE_CONFIG}/app-7.example.com`;
    const { encoded } = await step(objects().filter((_, i) => i !== routeAt("route-7")));
    assert.deepEqual(encoded, NOTHING);
    assert.ok(!tables().has(gone) && !scopes().has(gone));
    assert.equal(tables().size, ROUTES);
  });

  await t.step("below the threshold the same routes are one table with VHDS", async () => {
    const { encoded } = await step(
      objects().filter((o) =>
        o.kind !== "HTTPRoute" || Number(o.metadata.name.slice("route-".length)) < 1000
      ),
    );
    assert.equal(encoded.Listener, 1, "the listener takes RDS again");
    assert.equal(scopes().size, 0);
    assert.deepEqual([...tables().keys()], [ROUTE_CONFIG]);
    // route-0 … route-999 but route-7, removed above.
    assert.equal(served().resources(TypeUrl.virtualHost).items.size, 999);
  });
});
