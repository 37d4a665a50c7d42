/**
 * Real Envoy 1.40 behind the standalone agent: HTTPRoute matching as the GATEWAY-HTTP conformance
 * tests check it (HTTPRouteMatching, …AcrossRoutes, …PathMatchOrder, …HeaderMatching,
 * …QueryParamMatching, …MethodMatching), plus the 404 (no match) and 500 (invalid backend) rules.
 */
import { assertEquals } from "../testbed/assert.ts";
import { request } from "./http_client.ts";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  serviceFor,
  startEchos,
  startEdge,
} from "./harness.ts";

Deno.test("edge e2e: HTTPRoute matching on real Envoy", async (t) => {
  const echos = await startEchos("v1", "v2", "v3", "v4", "v5");
  const port = freePort();
  const ref = (name: string, weight?: number) => ({
    name,
    port: 8080,
    ...(weight !== undefined ? { weight } : {}),
  });
  const objects = [
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...Object.entries(echos).flatMap(([n, e]) => serviceFor(n, e)),
    // HTTPRouteMatching: path prefix + exact + header, on one route.
    httpRoute("matching", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["match.example.com"],
      rules: [
        { matches: [{ path: { type: "PathPrefix", value: "/" } }], backendRefs: [ref("v1")] },
        {
          matches: [{ path: { type: "Exact", value: "/v2" } }, {
            headers: [{ name: "version", value: "two" }],
          }],
          backendRefs: [ref("v2")],
        },
        {
          matches: [{ path: { type: "PathPrefix", value: "/prefix/one" } }],
          backendRefs: [ref("v3")],
        },
        {
          matches: [{ path: { type: "RegularExpression", value: "/regex/[0-9]+" } }],
          backendRefs: [ref("v4")],
        },
        {
          matches: [{
            path: { type: "PathPrefix", value: "/q" },
            queryParams: [{ name: "animal", value: "whale" }],
          }],
          backendRefs: [ref("v5")],
        },
        {
          matches: [{
            path: { type: "PathPrefix", value: "/q" },
            queryParams: [{ type: "RegularExpression", name: "color", value: "^bl.*" }],
          }],
          backendRefs: [ref("v4")],
        },
        {
          matches: [{ path: { type: "PathPrefix", value: "/m" }, method: "POST" }],
          backendRefs: [ref("v2")],
        },
        {
          matches: [{
            path: { type: "PathPrefix", value: "/h" },
            headers: [{ type: "RegularExpression", name: "x-re", value: "^a+b$" }],
          }],
          backendRefs: [ref("v3")],
        },
      ],
    }),
    // HTTPRouteMatchingAcrossRoutes: two routes on one hostname merge by precedence.
    httpRoute(
      "across-a",
      {
        parentRefs: [{ name: "gw" }],
        hostnames: ["across.example.com"],
        rules: [{
          matches: [{ path: { type: "PathPrefix", value: "/" } }],
          backendRefs: [ref("v1")],
        }],
      },
      "default",
      "2026-01-01T00:00:00Z",
    ),
    httpRoute(
      "across-b",
      {
        parentRefs: [{ name: "gw" }],
        hostnames: ["across.example.com"],
        rules: [
          { matches: [{ path: { type: "PathPrefix", value: "/b" } }], backendRefs: [ref("v2")] },
          {
            matches: [{
              path: { type: "PathPrefix", value: "/" },
              headers: [{ name: "x-b", value: "1" }],
            }],
            backendRefs: [ref("v3")],
          },
        ],
      },
      "default",
      "2026-01-02T00:00:00Z",
    ),
    // HTTPRoutePathMatchOrder: exact > longest prefix, prefix matches whole segments.
    httpRoute("order", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["order.example.com"],
      rules: [
        { matches: [{ path: { type: "PathPrefix", value: "/match" } }], backendRefs: [ref("v1")] },
        {
          matches: [{ path: { type: "PathPrefix", value: "/match/exact" } }],
          backendRefs: [ref("v2")],
        },
        {
          matches: [{ path: { type: "Exact", value: "/match/exact/one" } }],
          backendRefs: [ref("v3")],
        },
        {
          matches: [{ path: { type: "PathPrefix", value: "/match/prefix/one" } }],
          backendRefs: [ref("v4")],
        },
      ],
    }),
    // Invalid backends: one bad ref → 500 for its share; all bad → 500.
    httpRoute("invalid", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["invalid.example.com"],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/all-bad" } }],
          backendRefs: [{ name: "nope", port: 8080 }],
        },
        {
          matches: [{ path: { type: "PathPrefix", value: "/half" } }],
          backendRefs: [{ name: "nope", port: 8080, weight: 1 }, ref("v1", 1)],
        },
        { matches: [{ path: { type: "PathPrefix", value: "/ok" } }], backendRefs: [ref("v1")] },
      ],
    }),
  ];
  const edge = await startEdge(objects);
  const get = async (
    authority: string,
    path: string,
    init: { method?: string; headers?: Record<string, string> } = {},
  ) => {
    const r = await request({ port, authority, path, ...init });
    return r.status === 200 ? String(r.json?.backend) : `HTTP ${r.status}`;
  };
  try {
    await t.step("HTTPRouteMatching: prefix, exact, header, regex, query, method", async () => {
      const h = "match.example.com";
      assertEquals(await get(h, "/"), "v1");
      assertEquals(await get(h, "/example"), "v1");
      assertEquals(await get(h, "/v2"), "v2");
      assertEquals(await get(h, "/v2/example"), "v1", "Exact does not match a longer path");
      assertEquals(await get(h, "/", { headers: { version: "two" } }), "v2");
      assertEquals(await get(h, "/prefix/one"), "v3");
      assertEquals(await get(h, "/prefix/one/two"), "v3");
      assertEquals(await get(h, "/prefix/onetwo"), "v1", "PathPrefix matches whole segments only");
      assertEquals(await get(h, "/regex/123"), "v4");
      assertEquals(await get(h, "/regex/abc"), "v1");
      assertEquals(await get(h, "/q?animal=whale"), "v5");
      assertEquals(await get(h, "/q?animal=dolphin"), "v1");
      assertEquals(await get(h, "/q?color=blue"), "v4");
      assertEquals(await get(h, "/m", { method: "POST" }), "v2");
      assertEquals(await get(h, "/m", { method: "GET" }), "v1");
      assertEquals(await get(h, "/h", { headers: { "x-re": "aaab" } }), "v3");
      assertEquals(await get(h, "/h", { headers: { "x-re": "aaabb" } }), "v1");
    });
    await t.step(
      "HTTPRouteMatchingAcrossRoutes: precedence across two routes on one host",
      async () => {
        const h = "across.example.com";
        assertEquals(await get(h, "/"), "v1");
        assertEquals(await get(h, "/b"), "v2");
        assertEquals(
          await get(h, "/", { headers: { "x-b": "1" } }),
          "v3",
          "a header match beats a bare prefix",
        );
      },
    );
    await t.step("HTTPRoutePathMatchOrder: exact beats the longest prefix", async () => {
      const h = "order.example.com";
      assertEquals(await get(h, "/match"), "v1");
      assertEquals(await get(h, "/match/exact"), "v2");
      assertEquals(await get(h, "/match/exact/one"), "v3");
      assertEquals(await get(h, "/match/exact/one/two"), "v2");
      assertEquals(await get(h, "/match/prefix/one/x"), "v4");
    });
    await t.step("404 when no route matches the host", async () => {
      assertEquals(await get("unknown.example.com", "/"), "HTTP 404");
    });
    await t.step("500 for an invalid backendRef, for its share only", async () => {
      const h = "invalid.example.com";
      assertEquals(await get(h, "/all-bad"), "HTTP 500");
      assertEquals(await get(h, "/ok"), "v1");
      const seen = new Set<string>();
      for (let i = 0; i < 40; i++) seen.add(await get(h, "/half"));
      assertEquals([...seen].sort(), ["HTTP 500", "v1"]);
    });
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});
