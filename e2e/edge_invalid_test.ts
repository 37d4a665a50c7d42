/**
 * Real Envoy 1.40: the GATEWAY-HTTP HTTPRouteInvalid* cases — what is served (500 for a bad
 * backendRef, nothing for an unattached route) and the status that says why.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { request } from "./http_client.ts";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  namespace,
  serviceFor,
  startEchos,
  startEdge,
} from "./harness.ts";

interface Condition {
  type: string;
  status: string;
  reason: string;
}
interface RouteStatus {
  kind: string;
  name: string;
  namespace?: string;
  status: { parents: { conditions: Condition[] }[] };
}

Deno.test("edge e2e: HTTPRouteInvalid* — served behaviour and status reasons", async (t) => {
  const echos = await startEchos("web", "backend");
  const port = freePort();
  const route = (name: string, spec: Record<string, unknown>, ns = "default") =>
    httpRoute(name, { hostnames: [`${name}.example.com`], ...spec }, ns);
  const edge = await startEdge([
    gatewayClass(),
    namespace("default"),
    namespace("backends"),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...serviceFor("web", echos.web),
    ...serviceFor("backend", echos.backend, { namespace: "backends" }),
    route("nonexistent-backend", {
      parentRefs: [{ name: "gw" }],
      rules: [{ backendRefs: [{ name: "does-not-exist", port: 8080 }] }],
    }),
    route("unknown-kind", {
      parentRefs: [{ name: "gw" }],
      rules: [{
        backendRefs: [{ group: "unknown.example.com", kind: "Widget", name: "web", port: 8080 }],
      }],
    }),
    route("cross-ns-backend", {
      parentRefs: [{ name: "gw" }],
      rules: [{ backendRefs: [{ name: "backend", namespace: "backends", port: 8080 }] }],
    }),
    // A grant that exists but does not cover this route's namespace.
    {
      apiVersion: "gateway.networking.k8s.io/v1beta1",
      kind: "ReferenceGrant",
      metadata: { name: "wrong-from", namespace: "backends" },
      spec: {
        from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "elsewhere" }],
        to: [{ group: "", kind: "Service" }],
      },
    },
    route("wrong-port", {
      parentRefs: [{ name: "gw", port: port + 1 }],
      rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
    }),
    route("wrong-section", {
      parentRefs: [{ name: "gw", sectionName: "nope" }],
      rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
    }),
    route("section-and-port", {
      parentRefs: [{ name: "gw", sectionName: "http", port: port + 1 }],
      rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
    }),
    route("cross-ns-parent", {
      parentRefs: [{ name: "gw", namespace: "default" }],
      rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
    }, "backends"),
    route("valid", {
      parentRefs: [{ name: "gw" }],
      rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
    }),
  ]);
  const statusOf = async (name: string) => {
    const doc = await (await fetch(`http://${edge.agent.admin.address}/status`)).json();
    const s = (doc.config.objects as RouteStatus[]).find((o) =>
      o.kind === "HTTPRoute" && o.name === name
    );
    assert(s, `no status for HTTPRoute ${name}`);
    const conds = s.status.parents[0]?.conditions ?? [];
    const by = (type: string) => conds.find((c) => c.type === type);
    return { accepted: by("Accepted"), resolved: by("ResolvedRefs") };
  };
  const status = async (name: string) =>
    (await request({ port, authority: `${name}.example.com` })).status;
  try {
    await t.step("a valid route still serves", async () => {
      assertEquals(await status("valid"), 200);
    });
    await t.step("NonExistentBackendRef → 500, ResolvedRefs=False BackendNotFound", async () => {
      assertEquals(await status("nonexistent-backend"), 500);
      const s = await statusOf("nonexistent-backend");
      assertEquals([s.accepted?.status, s.resolved?.status, s.resolved?.reason], [
        "True",
        "False",
        "BackendNotFound",
      ]);
    });
    await t.step("BackendRefUnknownKind → 500, ResolvedRefs=False InvalidKind", async () => {
      assertEquals(await status("unknown-kind"), 500);
      const s = await statusOf("unknown-kind");
      assertEquals([s.resolved?.status, s.resolved?.reason], ["False", "InvalidKind"]);
    });
    await t.step(
      "CrossNamespaceBackendRef / InvalidReferenceGrant → 500, RefNotPermitted",
      async () => {
        assertEquals(await status("cross-ns-backend"), 500);
        const s = await statusOf("cross-ns-backend");
        assertEquals([s.resolved?.status, s.resolved?.reason], ["False", "RefNotPermitted"]);
      },
    );
    await t.step(
      "ParentRef not matching listener port / sectionName → not served, NoMatchingParent",
      async () => {
        for (const name of ["wrong-port", "wrong-section", "section-and-port"]) {
          assertEquals(await status(name), 404, name);
          const s = await statusOf(name);
          assertEquals(
            [s.accepted?.status, s.accepted?.reason],
            ["False", "NoMatchingParent"],
            name,
          );
        }
      },
    );
    await t.step(
      "CrossNamespaceParentRef not allowed (From: Same) → not served, NotAllowedByListeners",
      async () => {
        assertEquals(await status("cross-ns-parent"), 404);
        const s = await statusOf("cross-ns-parent");
        assertEquals([s.accepted?.status, s.accepted?.reason], ["False", "NotAllowedByListeners"]);
      },
    );
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});
