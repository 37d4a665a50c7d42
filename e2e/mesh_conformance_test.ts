/**
 * What the Gateway API v1.5.1 MESH-HTTP conformance tests check, as our own cases on a real
 * Envoy 1.40 node proxy (services on port 80 like the suite's `echo` services):
 * MeshBasic, MeshHTTPRouteMatching, MeshHTTPRouteRedirectHostAndStatus,
 * MeshHTTPRouteRequestHeaderModifier, MeshHTTPRouteSimpleSameNamespace, MeshHTTPRouteWeight,
 * MeshTrafficSplit, MeshConsumerRoute, MeshHTTPRouteRewritePath, MeshHTTPRouteSchemeRedirect,
 * MeshHTTPRouteRedirectPort, MeshHTTPRouteRedirectPath,
 * MeshHTTPRouteBackendRequestHeaderModification, MeshHTTPRouteQueryParamMatching,
 * MeshHTTPRouteNamedRouteRule. (MESH-GRPC: e2e/mesh_gamma_test.ts.)
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { closeEchos, startEchos } from "./harness.ts";
import {
  answer,
  createPod,
  curlFrom,
  meshService,
  podObject,
  startNode,
  toYaml,
} from "./mesh_harness.ts";
import type { SourceObject } from "../lib/source/mod.ts";

const NS = "mesh", CONSUMER = "consumer";
const parent = (name: string, namespace?: string) => ({
  group: "",
  kind: "Service",
  name,
  ...(namespace ? { namespace } : {}),
  port: 80,
});
const to = (name: string, extra: Record<string, unknown> = {}) => ({ name, port: 80, ...extra });
const prefix = (value: string) => ({ path: { type: "PathPrefix", value } });
let age = 0;
const route = (name: string, svc: string, rules: unknown[], namespace = NS): SourceObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: {
    name,
    namespace,
    generation: 1,
    creationTimestamp: `2026-01-01T00:00:${String(age++).padStart(2, "0")}Z`,
  },
  spec: { parentRefs: [parent(svc, namespace === NS ? undefined : NS)], rules },
});

Deno.test("mesh conformance (ours): MESH-HTTP cases on a real Envoy node proxy", async (t) => {
  const echos = await startEchos("echo", "echo-v1", "echo-v2", "echo-v3");
  const producer = await createPod(), consumer = await createPod();
  const dir = await Deno.makeTempDir({ prefix: "aether-meshconf-" });
  // Front services (route parents) have endpoints too; only echo* answer with their own names.
  const front = (name: string) => meshService(name, NS, echos["echo"], { port: 80 });
  const objects: SourceObject[] = [
    ...["echo", "echo-v1", "echo-v2", "echo-v3"].flatMap((n) =>
      meshService(n, NS, echos[n], { port: 80 })
    ),
    ...["match", "redirect", "weight", "rewrite", "query", "named"].flatMap(front),
    podObject(producer, NS, "client", "node-1"),
    podObject(consumer, CONSUMER, "client", "node-1"),
    route("matching", "match", [
      { matches: [prefix("/")], backendRefs: [to("echo-v1")] },
      {
        matches: [{ path: { type: "Exact", value: "/v2" } }, {
          headers: [{ name: "version", value: "two" }],
        }],
        backendRefs: [to("echo-v2")],
      },
    ]),
    route("redirects", "redirect", [
      {
        matches: [prefix("/hostname-redirect")],
        filters: [{ type: "RequestRedirect", requestRedirect: { hostname: "example.com" } }],
      },
      {
        matches: [prefix("/host-and-status")],
        filters: [{
          type: "RequestRedirect",
          requestRedirect: { hostname: "example.com", statusCode: 301 },
        }],
      },
      ...[303, 307, 308].map((statusCode) => ({
        matches: [prefix(`/status-${statusCode}`)],
        filters: [{ type: "RequestRedirect", requestRedirect: { statusCode } }],
      })),
      {
        matches: [prefix("/scheme")],
        filters: [{ type: "RequestRedirect", requestRedirect: { scheme: "https" } }],
      },
      {
        matches: [prefix("/port")],
        filters: [{ type: "RequestRedirect", requestRedirect: { port: 8083 } }],
      },
      {
        matches: [prefix("/full")],
        filters: [{
          type: "RequestRedirect",
          requestRedirect: {
            path: { type: "ReplaceFullPath", replaceFullPath: "/full-path-replacement" },
          },
        }],
      },
      {
        matches: [prefix("/prefix")],
        filters: [{
          type: "RequestRedirect",
          requestRedirect: {
            path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/replacement-prefix" },
          },
        }],
      },
    ]),
    route("headers", "echo-v3", [{
      filters: [{
        type: "RequestHeaderModifier",
        requestHeaderModifier: {
          set: [{ name: "X-Header-Set", value: "set-overwrites-values" }],
          add: [{ name: "X-Header-Add", value: "add-appends-values" }],
          remove: ["X-Header-Remove"],
        },
      }],
      backendRefs: [to("echo-v3")],
    }]),
    route("weights", "weight", [{
      backendRefs: [
        to("echo-v1", { weight: 70 }),
        to("echo-v2", { weight: 30 }),
        to("echo-v3", { weight: 0 }),
      ],
    }]),
    route("rewrite", "rewrite", [
      {
        matches: [prefix("/prefix/one")],
        filters: [{
          type: "URLRewrite",
          urlRewrite: { path: { type: "ReplacePrefixMatch", replacePrefixMatch: "/one" } },
        }],
        backendRefs: [to("echo-v1")],
      },
      {
        matches: [prefix("/full/one")],
        filters: [{
          type: "URLRewrite",
          urlRewrite: { path: { type: "ReplaceFullPath", replaceFullPath: "/one" } },
        }],
        backendRefs: [to("echo-v1")],
      },
      {
        matches: [prefix("/backend-headers")],
        backendRefs: [
          to("echo-v2", {
            filters: [{
              type: "RequestHeaderModifier",
              requestHeaderModifier: { set: [{ name: "X-Backend", value: "v2" }] },
            }],
          }),
        ],
      },
    ]),
    route("query", "query", [
      {
        matches: [{ queryParams: [{ name: "animal", value: "whale" }] }],
        backendRefs: [to("echo-v1")],
      },
      {
        matches: [{ queryParams: [{ name: "animal", value: "dolphin" }] }],
        backendRefs: [to("echo-v2")],
      },
      {
        matches: [{
          queryParams: [{ name: "animal", value: "dolphin" }, { name: "color", value: "blue" }],
        }],
        backendRefs: [to("echo-v3")],
      },
    ]),
    route("named", "named", [
      { name: "first", matches: [prefix("/first")], backendRefs: [to("echo-v1")] },
      { name: "second", matches: [prefix("/second")], backendRefs: [to("echo-v2")] },
    ]),
    // MeshConsumerRoute: the consumer namespace's own route for echo; the producer namespace is unaffected.
    route("consumer-echo", "echo", [{
      filters: [{
        type: "RequestHeaderModifier",
        requestHeaderModifier: { set: [{ name: "X-Consumer", value: "yes" }] },
      }],
      backendRefs: [to("echo-v2", { namespace: NS })],
    }], CONSUMER),
  ];
  await Deno.writeTextFile(`${dir}/mesh.yaml`, toYaml(...objects));
  const node = await startNode(dir, "node-1");
  const host = (svc: string) => `${svc}.aether.internal`;
  const get = (svc: string, path = "/", headers: Record<string, string> = {}, from = producer) =>
    curlFrom(from, host(svc), { path, headers });
  try {
    await t.step(
      "MeshBasic / SimpleSameNamespace: no route → the Service's endpoints",
      async () => {
        assertEquals(answer(await get("echo-v1")), "echo-v1");
        assertEquals(answer(await get("echo-v2", "/any/path")), "echo-v2");
      },
    );
    await t.step("MeshHTTPRouteMatching", async () => {
      assertEquals(answer(await get("match", "/")), "echo-v1");
      assertEquals(answer(await get("match", "/example")), "echo-v1");
      assertEquals(answer(await get("match", "/v2")), "echo-v2");
      assertEquals(answer(await get("match", "/", { version: "two" })), "echo-v2");
    });
    await t.step("Redirects: HostAndStatus, 303/307/308, Scheme, Port, Path", async () => {
      const loc = async (path: string) => {
        const r = await get("redirect", path);
        return `${r.first.status} ${r.first.headers.location}`;
      };
      assertEquals(await loc("/hostname-redirect"), "302 http://example.com/hostname-redirect");
      assertEquals(await loc("/host-and-status"), "301 http://example.com/host-and-status");
      // MeshHTTPRoute303/307/308Redirect (v1.5.1's 307 test applies the 303 manifest, so the
      // official run skips it: testbed/conformance brokenUpstream).
      for (const code of [303, 307, 308]) {
        assertEquals(
          await loc(`/status-${code}`),
          `${code} http://${host("redirect")}/status-${code}`,
        );
      }
      assertEquals(await loc("/scheme"), `302 https://${host("redirect")}/scheme`);
      assertEquals(await loc("/port"), `302 http://${host("redirect")}:8083/port`);
      assertEquals(await loc("/full/x"), `302 http://${host("redirect")}/full-path-replacement`);
      assertEquals(await loc("/prefix/x"), `302 http://${host("redirect")}/replacement-prefix/x`);
    });
    await t.step("MeshHTTPRouteRequestHeaderModifier", async () => {
      const r = await get("echo-v3", "/", {
        "X-Header-Set": "original",
        "X-Header-Add": "original",
        "X-Header-Remove": "gone",
      });
      const seen = r.first.json?.headers as Record<string, string>;
      assertEquals(seen["x-header-set"], "set-overwrites-values");
      assertEquals(seen["x-header-add"].split(/,\s*/), ["original", "add-appends-values"]);
      assertEquals(seen["x-header-remove"], undefined);
    });
    await t.step(
      "MeshHTTPRouteWeight / MeshTrafficSplit: 70/30/0 within ±5% over 1,000",
      async () => {
        // ±5 % is ±3.45 standard deviations of 1,000 draws at 70 %: a correct split lands outside
        // it about once in 1,800 samples (CI met one: 753). As the upstream suite samples again
        // until it converges, up to three samples are taken; a wrong split misses all three.
        const seen: number[] = [];
        for (let attempt = 0; attempt < 3; attempt++) {
          const r = await curlFrom(producer, host("weight"), { count: 1000 });
          const v1 = r.counts["echo-v1"] ?? 0, v2 = r.counts["echo-v2"] ?? 0;
          assertEquals(v1 + v2, 1000, JSON.stringify(r.counts));
          seen.push(v1);
          if (Math.abs(v1 - 700) <= 50) break;
        }
        assert(Math.abs(seen[seen.length - 1] - 700) <= 50, `echo-v1 got ${seen.join(", ")}`);
      },
    );
    await t.step("MeshConsumerRoute: consumer namespace only", async () => {
      const c = await get("echo", "/", {}, consumer);
      assertEquals(answer(c), "echo-v2");
      assertEquals((c.first.json?.headers as Record<string, string>)["x-consumer"], "yes");
      const p = await get("echo", "/", {}, producer);
      assertEquals(answer(p), "echo");
      assertEquals((p.first.json?.headers as Record<string, string>)["x-consumer"], undefined);
    });
    await t.step("MeshHTTPRouteRewritePath and BackendRequestHeaderModification", async () => {
      assertEquals((await get("rewrite", "/prefix/one/two")).first.json?.path, "/one/two");
      assertEquals((await get("rewrite", "/full/one/two")).first.json?.path, "/one");
      const b = await get("rewrite", "/backend-headers");
      assertEquals(answer(b), "echo-v2");
      assertEquals((b.first.json?.headers as Record<string, string>)["x-backend"], "v2");
    });
    await t.step("MeshHTTPRouteQueryParamMatching: matches, and 404 for no match", async () => {
      assertEquals(answer(await get("query", "/?animal=whale")), "echo-v1");
      assertEquals(answer(await get("query", "/?animal=dolphin")), "echo-v2");
      assertEquals(answer(await get("query", "/?animal=dolphin&color=blue")), "echo-v3");
      for (
        const path of [
          "/?color=blue",
          "/?animal=dog",
          "/?animal=whaledolphin",
          "/",
          "/path4?animal=kraken",
        ]
      ) {
        assertEquals(answer(await get("query", path)), "HTTP 404", path);
      }
    });
    await t.step("MeshHTTPRouteNamedRouteRule", async () => {
      assertEquals(answer(await get("named", "/first")), "echo-v1");
      assertEquals(answer(await get("named", "/second")), "echo-v2");
    });
  } finally {
    await node.close();
    await closeEchos(echos);
    await producer.remove();
    await consumer.remove();
    await Deno.remove(dir, { recursive: true });
  }
});
