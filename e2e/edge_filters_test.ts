/**
 * Real Envoy 1.40: HTTPRoute filters and traffic policy as the GATEWAY-HTTP conformance tests check
 * them — redirects, rewrites, request/response header modification, mirrors, weights, timeouts,
 * retries.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { countBy, request } from "./http_client.ts";
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

const ref = (name: string, extra: Record<string, unknown> = {}) => ({ name, port: 8080, ...extra });
const prefix = (value: string) => [{ path: { type: "PathPrefix", value } }];

Deno.test("edge e2e: filters, weights, timeouts and retries on real Envoy", async (t) => {
  const echos = await startEchos("v1", "v2", "v3", "mirror-a", "mirror-b");
  const port = freePort();
  const edge = await startEdge([
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...Object.entries(echos).flatMap(([n, e]) => serviceFor(n, e)),
    httpRoute("filters", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["f.example.com"],
      rules: [
        {
          matches: prefix("/redirect/scheme"),
          filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https" } }],
        },
        {
          matches: prefix("/redirect/host"),
          filters: [{
            type: "RequestRedirect",
            requestRedirect: { hostname: "other.example.org", statusCode: 301 },
          }],
        },
        {
          matches: prefix("/redirect/port"),
          filters: [{ type: "RequestRedirect", requestRedirect: { port: 8083 } }],
        },
        {
          matches: prefix("/redirect/full"),
          filters: [{
            type: "RequestRedirect",
            requestRedirect: { path: { type: "ReplaceFullPath", replaceFullPath: "/full-path" } },
          }],
        },
        {
          matches: prefix("/redirect/prefix"),
          filters: [{
            type: "RequestRedirect",
            requestRedirect: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/new" } },
          }],
        },
        {
          matches: prefix("/rewrite/prefix"),
          filters: [{
            type: "URLRewrite",
            urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/one" } },
          }],
          backendRefs: [ref("v1")],
        },
        {
          matches: prefix("/rewrite/full"),
          filters: [{
            type: "URLRewrite",
            urlRewrite: {
              hostname: "rewritten.example.com",
              path: { type: "ReplaceFullPath", replaceFullPath: "/full" },
            },
          }],
          backendRefs: [ref("v1")],
        },
        {
          matches: prefix("/headers"),
          filters: [
            {
              type: "RequestHeaderModifier",
              requestHeaderModifier: {
                set: [{ name: "x-set", value: "set-value" }],
                add: [{ name: "x-add", value: "added" }],
                remove: ["x-remove"],
              },
            },
            {
              type: "ResponseHeaderModifier",
              responseHeaderModifier: {
                set: [{ name: "x-resp-set", value: "rs" }],
                add: [{ name: "x-resp-add", value: "ra" }],
                remove: ["x-resp-remove"],
              },
            },
          ],
          backendRefs: [ref("v1")],
        },
        {
          matches: prefix("/backend-headers"),
          backendRefs: [ref("v2", {
            filters: [{
              type: "RequestHeaderModifier",
              requestHeaderModifier: { set: [{ name: "x-backend", value: "v2" }] },
            }],
          })],
        },
        {
          matches: prefix("/mirror"),
          filters: [
            { type: "RequestMirror", requestMirror: { backendRef: ref("mirror-a") } },
            { type: "RequestMirror", requestMirror: { backendRef: ref("mirror-b"), percent: 0 } },
          ],
          backendRefs: [ref("v1")],
        },
        {
          matches: prefix("/weights"),
          backendRefs: [
            ref("v1", { weight: 70 }),
            ref("v2", { weight: 30 }),
            ref("v3", { weight: 0 }),
          ],
        },
        { matches: prefix("/timeout"), timeouts: { request: "500ms" }, backendRefs: [ref("v1")] },
        {
          matches: prefix("/backend-timeout"),
          timeouts: { request: "5s", backendRequest: "300ms" },
          backendRefs: [ref("v1")],
        },
        {
          matches: prefix("/retry"),
          retry: { codes: [503], attempts: 2 },
          backendRefs: [ref("v1")],
        },
        { matches: prefix("/no-retry"), backendRefs: [ref("v1")] },
      ],
    }),
  ]);
  const h = "f.example.com";
  try {
    await t.step("RequestRedirect: scheme, hostname + 301, port, full path, prefix", async () => {
      let r = await request({ port, authority: h, path: "/redirect/scheme" });
      assertEquals(r.status, 302);
      // The request's Host carries the listener's (non-80) port: the https port is spelt out.
      assertEquals(r.headers.location, "https://f.example.com:443/redirect/scheme");
      r = await request({ port, authority: h, path: "/redirect/host" });
      assertEquals(r.status, 301);
      // Without a scheme the port is the listener's (spelt out unless it is 80).
      assertEquals(r.headers.location, `http://other.example.org:${port}/redirect/host`);
      r = await request({ port, authority: h, path: "/redirect/port" });
      assertEquals(r.headers.location, "http://f.example.com:8083/redirect/port");
      r = await request({ port, authority: h, path: "/redirect/full/x" });
      assertEquals(r.headers.location, `http://f.example.com:${port}/full-path`);
      r = await request({ port, authority: h, path: "/redirect/prefix/x" });
      assertEquals(r.headers.location, `http://f.example.com:${port}/new/x`);
    });
    await t.step("URLRewrite: prefix and full path, hostname", async () => {
      let r = await request({ port, authority: h, path: "/rewrite/prefix/two" });
      assertEquals(r.json?.path, "/one/two");
      r = await request({ port, authority: h, path: "/rewrite/full/anything" });
      assertEquals(r.json?.path, "/full");
      assertEquals(r.json?.host, "rewritten.example.com");
    });
    await t.step("Request and response header modifiers, rule and backend level", async () => {
      const r = await request({
        port,
        authority: h,
        path: "/headers",
        headers: {
          "x-add": "original",
          "x-set": "original",
          "x-remove": "gone",
          "x-echo-set-x-resp-remove": "1",
        },
      });
      const sent = r.json?.headers as Record<string, string>;
      assertEquals(sent["x-set"], "set-value");
      assertEquals(sent["x-add"].split(/,\s*/), ["original", "added"]);
      assertEquals(sent["x-remove"], undefined);
      assertEquals(r.headers["x-resp-set"], "rs");
      assertEquals(r.headers["x-resp-add"], "ra");
      assertEquals(r.headers["x-resp-remove"], undefined);
      const b = await request({ port, authority: h, path: "/backend-headers" });
      assertEquals((b.json?.headers as Record<string, string>)["x-backend"], "v2");
    });
    await t.step(
      "RequestMirror: every request copied to mirror-a, none to a 0% mirror",
      async () => {
        const before = echos["mirror-a"].requests.length;
        for (let i = 0; i < 5; i++) {
          assertEquals(
            (await request({ port, authority: h, path: `/mirror/${i}` })).json?.backend,
            "v1",
          );
        }
        const deadline = Date.now() + 60000;
        while (
          echos["mirror-a"].requests.length < before + 5 && Date.now() < deadline
        ) await new Promise((r) => setTimeout(r, 20));
        assertEquals(echos["mirror-a"].requests.length - before, 5);
        assertEquals(echos["mirror-b"].requests.length, 0);
      },
    );
    await t.step("HTTPRouteWeight: 70/30/0 within ±5% over 1,000 requests", async () => {
      const counts = await countBy(
        1000,
        () => ({ port, authority: h, path: "/weights" }),
        (r) => String(r.json?.backend ?? r.status),
      );
      const v1 = counts.get("v1") ?? 0, v2 = counts.get("v2") ?? 0;
      assertEquals(v1 + v2, 1000, `unexpected answers: ${JSON.stringify([...counts])}`);
      assert(Math.abs(v1 - 700) <= 50, `v1 got ${v1}`);
      assert(Math.abs(v2 - 300) <= 50, `v2 got ${v2}`);
      assertEquals(counts.get("v3"), undefined, "weight 0 gets nothing");
    });
    await t.step("Timeouts: request and backendRequest turn a slow backend into 504", async () => {
      // Envoy answers 504 only when a timeout fires; the backend would have answered 200 at 1.5 s,
      // so a 504 means the route's shorter timeout ended it (no wall-clock check: load-proof).
      const slow = { "x-echo-delay-ms": "1500" };
      let r = await request({ port, authority: h, path: "/timeout", headers: slow });
      assertEquals(r.status, 504);
      r = await request({
        port,
        authority: h,
        path: "/timeout",
        headers: { "x-echo-delay-ms": "100" },
      });
      assertEquals(r.status, 200);
      r = await request({ port, authority: h, path: "/backend-timeout", headers: slow });
      assertEquals(r.status, 504);
    });
    await t.step(
      "Retry: 503s are retried up to the attempts; no retry without a policy",
      async () => {
        const key = crypto.randomUUID();
        let r = await request({
          port,
          authority: h,
          path: "/retry",
          headers: { "x-echo-fail-key": key, "x-echo-fail-times": "2" },
        });
        assertEquals(r.status, 200, "two failures, two retries → success");
        const key2 = crypto.randomUUID();
        r = await request({
          port,
          authority: h,
          path: "/retry",
          headers: { "x-echo-fail-key": key2, "x-echo-fail-times": "3" },
        });
        assertEquals(r.status, 503, "three failures exceed two retries");
        const key3 = crypto.randomUUID();
        r = await request({
          port,
          authority: h,
          path: "/no-retry",
          headers: { "x-echo-fail-key": key3, "x-echo-fail-times": "1" },
        });
        assertEquals(r.status, 503);
      },
    );
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});
