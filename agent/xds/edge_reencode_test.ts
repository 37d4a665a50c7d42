/**
 * At 10,000 HTTPRoutes, an edit costs the edge one route's work: the edge pipeline (the engine's
 * resolve, then translate, ResourceReuse and the snapshot's encodings) translates and encodes
 * only the resources the edit touched, counted by `aether_xds_resources_encoded_total` and the
 * memos' misses. Without the reuse or the remembered encodings every VirtualHost is encoded again
 * and these tests fail; without the positional walks (translate's virtual hosts by identity,
 * ResourceReuse by position, lists encoded in place or shifted by one) the unchanged 9,999 are
 * looked up again.
 * (Resolve's misses are asserted: an edit takes its edit path, which redoes the edited route
 * alone, a deletion its remove path (counted on `aether_resolves_total`), which redoes none; other
 * revisions look every route up, its memos hit for the unchanged.)
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

Deno.test("edge at 10k routes: an edit, an added route and a removed one encode only what they touch", async (t) => {
  const { registry, encoded, step, served, versions, routeAt, objects } = await edge10k({
    scopedRoutesAt: 0,
  });
  assert.equal(served().resources(TypeUrl.virtualHost).items.size, ROUTES);
  assert.deepEqual(encoded(), {
    Listener: 1,
    RouteConfiguration: 1,
    VirtualHost: ROUTES,
    ScopedRouteConfiguration: 0,
    Cluster: SERVICES,
    ClusterLoadAssignment: SERVICES,
    Secret: 0,
  });
  const shown = registry.render();
  assert.match(shown, /^aether_xds_resources_encoded_total\{type_url=".*\.VirtualHost"\} 10000$/m);
  assert.match(shown, /^aether_xds_resources_reused_total\{type_url=".*\.VirtualHost"\} 0$/m);

  await t.step("one route's header value: one VirtualHost, one route of it", async () => {
    const before = versions();
    const { encoded, sink, resolve } = await step(objects().with(routeAt("route-0"), route(0, 1)));
    assert.deepEqual(encoded, { ...NOTHING, VirtualHost: 1 });
    // The wide virtual host is encoded route by route: only the edited route's chunk is new.
    // Every other virtual host is the same IR object at the same position: not looked up, its
    // resource reused at its position and every list encoded in place over the last.
    assert.deepEqual(sink, {
      translatePositions: 1,
      translateVhds: 1,
      translateVirtualHosts: 1,
      translateServed: 1,
      translateClusters: 0,
      translateEndpoints: 0,
      encodeResources: 1,
      encodeElements: 1,
      encodeLists: 0,
      reusePositions: 0,
    });
    for (const memo of ["admit", "convertEdge", "vhosts", "statuses"]) {
      assert.equal(resolve[memo], 1, `resolve's ${memo} memo: the edited route alone`);
    }
    // Resolve's edit path keeps the route's attachment (same parentRefs and hostnames).
    assert.equal(resolve.attach, 0, "resolve's attach memo: not asked (the edit path)");
    assert.equal(resolve.endpoints, 0, "no Service's endpoints looked up again");
    const after = versions();
    assert.deepEqual(
      Object.keys(after).filter((k) => after[k] !== before[k]),
      ["VirtualHost"],
      "only the VirtualHost type's version moves",
    );
    const vh = served().resources(TypeUrl.virtualHost).items.get(
      `${ROUTE_CONFIG}/app-0.example.com`,
    );
    assert.ok(vh, "the edited route's virtual host is served under its VHDS name");
    assert.match(JSON.stringify(vh.resource), /"e1"/, "with the new header value");
  });

  await t.step("a route to a new Service: its VirtualHost, Cluster and endpoints", async () => {
    const { encoded, sink, resolve } = await step([
      ...objects(),
      ...service("svc-new", 250),
      route(ROUTES, 0, ["svc-new"]),
    ]);
    assert.deepEqual(encoded, { ...NOTHING, VirtualHost: 1, Cluster: 1, ClusterLoadAssignment: 1 });
    assert.equal(sink.translateVirtualHosts, 1);
    assert.equal(sink.translateClusters, 1);
    assert.equal(sink.translateEndpoints, 1);
    assert.equal(sink.encodeElements, 0);
    assert.equal(sink.translatePositions, 1, "the new virtual host alone not found in place");
    assert.equal(sink.reusePositions, 3, "the new VirtualHost, Cluster and endpoints looked up");
    assert.equal(sink.encodeLists, 0, "the three longer lists encoded over the last, shifted");
    assert.equal(resolve.admit, 3, "the Service, its EndpointSlice and the route admitted");
    assert.equal(resolve.convertEdge, 1, "the new route alone converted");
    const snap = served();
    assert.equal(snap.resources(TypeUrl.virtualHost).items.size, ROUTES + 1);
    assert.ok(
      snap.resources(TypeUrl.virtualHost).items.has(`${ROUTE_CONFIG}/app-${ROUTES}.example.com`),
    );
    assert.ok(snap.resources(TypeUrl.cluster).items.has("svc-new.aether.internal"));
    assert.ok(snap.resources(TypeUrl.endpoint).items.has("svc-new.aether.internal"));
  });

  await t.step("a removed route: nothing encoded, its VirtualHost gone", async () => {
    const gone = `${ROUTE_CONFIG}/app-7.example.com`;
    assert.ok(served().resources(TypeUrl.virtualHost).items.has(gone));
    const before = versions();
    const { encoded, sink } = await step(objects().filter((_, i) => i !== routeAt("route-7")));
    assert.deepEqual(encoded, NOTHING);
    assert.match(
      registry.render(),
      /^aether_resolves_total\{path="remove"\} 1$/m,
      "resolved on the last result (the remove path), no route looked up again",
    );
    assert.equal(sink.translateVirtualHosts, 0);
    assert.equal(sink.encodeResources, 0);
    // The virtual hosts after the gap are found one position over, not looked up.
    assert.equal(sink.translatePositions, 0);
    assert.equal(sink.reusePositions, 0);
    assert.equal(
      sink.encodeLists,
      0,
      "the shorter VirtualHost list encoded over the last, shifted",
    );
    const snap = served();
    assert.equal(snap.resources(TypeUrl.virtualHost).items.size, ROUTES);
    assert.ok(!snap.resources(TypeUrl.virtualHost).items.has(gone), "its VirtualHost is gone");
    const after = versions();
    assert.deepEqual(Object.keys(after).filter((k) => after[k] !== before[k]), ["VirtualHost"]);
  });
});
