/**
 * Real Envoy 1.40: hostnames, namespaces, references and TLS as the GATEWAY-HTTP conformance tests
 * check them — HTTPRouteHostnameIntersection, HTTPRouteListenerHostnameMatching,
 * HTTPRouteCrossNamespace, HTTPRouteReferenceGrant, HTTPRouteHTTPSListener,
 * GatewayWithAttachedRoutes.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { request } from "./http_client.ts";
import {
  closeEchos,
  freePorts,
  gateway,
  gatewayClass,
  httpRoute,
  namespace,
  serviceFor,
  startEchos,
  startEdge,
} from "./harness.ts";
import { makeCert } from "./tls.ts";

const ref = (name: string, ns?: string) => ({ name, port: 8080, ...(ns ? { namespace: ns } : {}) });

interface Condition {
  type: string;
  status: string;
  reason: string;
}
type Status = { kind: string; namespace?: string; name: string; status: Record<string, unknown> };

function conditionsOf(statuses: Status[], kind: string, name: string): Condition[] {
  const s = statuses.find((x) => x.kind === kind && x.name === name);
  assert(s, `no status for ${kind} ${name}`);
  return (s.status.conditions ?? []) as Condition[];
}

Deno.test("edge e2e: hostnames, namespaces, ReferenceGrant, HTTPS and attached-route status", async (t) => {
  const echos = await startEchos("infra", "app", "other", "wild", "secure");
  const [httpPort, httpsPort] = freePorts(2);
  const cert = await makeCert(["secure.example.com", "*.example.com"]);
  const edge = await startEdge([
    gatewayClass(),
    namespace("infra"),
    namespace("apps", { team: "apps" }),
    namespace("other"),
    gateway("gw", [
      { name: "very-specific", protocol: "HTTP", port: httpPort, hostname: "very.specific.com" },
      { name: "wildcard", protocol: "HTTP", port: httpPort, hostname: "*.wildcard.io" },
      {
        name: "any",
        protocol: "HTTP",
        port: httpPort,
        allowedRoutes: {
          namespaces: { from: "Selector", selector: { matchLabels: { team: "apps" } } },
        },
      },
      {
        name: "https",
        protocol: "HTTPS",
        port: httpsPort,
        hostname: "secure.example.com",
        tls: { certificateRefs: [{ name: "tls-cert" }] },
      },
    ], "infra"),
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "tls-cert", namespace: "infra" },
      type: "kubernetes.io/tls",
      data: { "tls.crt": btoa(cert.cert), "tls.key": btoa(cert.key) },
    },
    ...serviceFor("infra", echos.infra, { namespace: "infra" }),
    ...serviceFor("app", echos.app, { namespace: "apps" }),
    ...serviceFor("other", echos.other, { namespace: "other" }),
    ...serviceFor("wild", echos.wild, { namespace: "infra" }),
    ...serviceFor("secure", echos.secure, { namespace: "infra" }),
    // Listener hostname matching: a route without hostnames attaches to each listener section.
    httpRoute("specific", {
      parentRefs: [{ name: "gw", namespace: "infra", sectionName: "very-specific" }],
      rules: [{ backendRefs: [ref("infra")] }],
    }, "infra"),
    // Hostname intersection: only foo.wildcard.io intersects *.wildcard.io; bar.example.net does not.
    httpRoute("wild", {
      parentRefs: [{ name: "gw", namespace: "infra", sectionName: "wildcard" }],
      hostnames: ["foo.wildcard.io", "bar.example.net"],
      rules: [{ backendRefs: [ref("wild")] }],
    }, "infra"),
    // Cross-namespace parentRef allowed by the Selector; cross-namespace backendRef needs a grant.
    httpRoute("app", {
      parentRefs: [{ name: "gw", namespace: "infra", sectionName: "any" }],
      hostnames: ["app.example.com"],
      rules: [
        {
          matches: [{ path: { type: "PathPrefix", value: "/granted" } }],
          backendRefs: [ref("other", "other")],
        },
        { backendRefs: [ref("app")] },
      ],
    }, "apps"),
    {
      apiVersion: "gateway.networking.k8s.io/v1beta1",
      kind: "ReferenceGrant",
      metadata: { name: "allow-apps", namespace: "other" },
      spec: {
        from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "apps" }],
        to: [{ group: "", kind: "Service" }],
      },
    },
    // Not allowed: namespace "other" is not selected by the listener.
    httpRoute("rejected", {
      parentRefs: [{ name: "gw", namespace: "infra", sectionName: "any" }],
      hostnames: ["rejected.example.com"],
      rules: [{ backendRefs: [ref("other")] }],
    }, "other"),
    // Cross-namespace backendRef without a grant.
    httpRoute("ungranted", {
      parentRefs: [{ name: "gw", namespace: "infra", sectionName: "any" }],
      hostnames: ["ungranted.example.com"],
      rules: [{ backendRefs: [ref("infra", "infra")] }],
    }, "apps"),
    httpRoute("secure", {
      parentRefs: [{ name: "gw", namespace: "infra", sectionName: "https" }],
      rules: [{ backendRefs: [ref("secure")] }],
    }, "infra"),
  ]);
  const get = async (authority: string, path = "/") => {
    const r = await request({ port: httpPort, authority, path });
    return r.status === 200 ? String(r.json?.backend) : `HTTP ${r.status}`;
  };
  try {
    await t.step("HTTPRouteListenerHostnameMatching", async () => {
      assertEquals(await get("very.specific.com"), "infra");
      assertEquals(await get("foo.wildcard.io"), "wild");
    });
    await t.step(
      "HTTPRouteHostnameIntersection: non-intersecting hostnames are not served",
      async () => {
        assertEquals(await get("bar.example.net"), "HTTP 404");
        assertEquals(await get("other.wildcard.io"), "HTTP 404");
      },
    );
    await t.step("HTTPRouteCrossNamespace + ReferenceGrant", async () => {
      assertEquals(await get("app.example.com"), "app");
      assertEquals(await get("app.example.com", "/granted"), "other");
      assertEquals(
        await get("ungranted.example.com"),
        "HTTP 500",
        "no ReferenceGrant → invalid backend → 500",
      );
      assertEquals(
        await get("rejected.example.com"),
        "HTTP 404",
        "route from an unselected namespace is not attached",
      );
    });
    await t.step(
      "HTTPRouteHTTPSListener: TLS terminated with the Secret's certificate",
      async () => {
        const r = await request({
          port: httpsPort,
          authority: "secure.example.com",
          tls: { ca: cert.ca, servername: "secure.example.com" },
        });
        assertEquals(r.status, 200);
        assertEquals(r.json?.backend, "secure");
      },
    );
    await t.step(
      "Status: GatewayWithAttachedRoutes, NotAllowedByListeners, RefNotPermitted",
      async () => {
        const doc = await (await fetch(`http://${edge.agent.admin.address}/status`)).json();
        const statuses = doc.config.objects as Status[];
        const gw = statuses.find((s) => s.kind === "Gateway" && s.name === "gw")!;
        const listeners = gw.status.listeners as { name: string; attachedRoutes: number }[];
        const attached = Object.fromEntries(listeners.map((l) => [l.name, l.attachedRoutes]));
        assertEquals(attached, { "very-specific": 1, wildcard: 1, any: 2, https: 1 });
        const accepted = (name: string) => {
          const route = statuses.find((s) => s.kind === "HTTPRoute" && s.name === name)!;
          const parents = route.status.parents as { conditions: Condition[] }[];
          return parents[0].conditions;
        };
        assertEquals(
          accepted("rejected").find((c) => c.type === "Accepted")?.reason,
          "NotAllowedByListeners",
        );
        assertEquals(
          accepted("ungranted").find((c) => c.type === "ResolvedRefs")?.reason,
          "RefNotPermitted",
        );
        assertEquals(
          conditionsOf(statuses, "Gateway", "gw").find((c) => c.type === "Programmed")?.status,
          "True",
        );
      },
    );
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});
