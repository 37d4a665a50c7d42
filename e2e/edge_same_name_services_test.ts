/**
 * Real Envoy 1.40: two Services of one name in two namespaces (what the official conformance
 * suite's base manifests hold: `tls-backend` in gateway-conformance-infra and -app-backend). Only
 * the older owns the namespace-free mesh name, but Gateway API backendRefs are namespaced, so a
 * Gateway route reaches each one — the younger under a namespaced cluster — while the Service
 * without a mesh name is reported on the Service itself.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { request } from "./http_client.ts";
import {
  closeEchos,
  freePort,
  sameNameRoutes,
  serviceFor,
  startEchos,
  startEdge,
} from "./harness.ts";

interface Condition {
  type: string;
  status: string;
  reason: string;
}

/** `serviceFor` with the Service's creationTimestamp set (the mesh-name owner is the older). */
function agedService(
  ns: string,
  echo: Parameters<typeof serviceFor>[1],
  created: string,
): SourceObject[] {
  const [svc, slice] = serviceFor("web", echo, { namespace: ns });
  return [{ ...svc, metadata: { ...svc.metadata, creationTimestamp: created } }, slice];
}

Deno.test("edge e2e: same-named Services in two namespaces both serve their Gateway routes", async () => {
  const echos = await startEchos("older", "younger");
  const port = freePort();
  const edge = await startEdge([
    ...sameNameRoutes(port, ["one", "two"]),
    ...agedService("one", echos.older, "2020-01-01T00:00:00Z"),
    ...agedService("two", echos.younger, "2024-01-01T00:00:00Z"),
  ]);
  try {
    for (const [ns, backend] of [["one", "older"], ["two", "younger"]]) {
      const r = await request({ port, authority: `${ns}.example.com` });
      assertEquals(r.status, 200, `${ns}: ${r.body}`);
      assertEquals(r.json?.backend, backend, ns);
    }
    const doc = await (await fetch(`http://${edge.agent.admin.address}/status`)).json();
    const objects = doc.config.objects as {
      kind: string;
      namespace?: string;
      status: { parents: { conditions: Condition[] }[] };
    }[];
    for (const ns of ["one", "two"]) {
      const s = objects.find((o) => o.kind === "HTTPRoute" && o.namespace === ns);
      const resolved = s?.status.parents[0]?.conditions.find((c) => c.type === "ResolvedRefs");
      assertEquals([resolved?.status, resolved?.reason], ["True", "ResolvedRefs"], ns);
    }
    const problems = doc.config.problems as { kind: string; namespace?: string; message: string }[];
    const named = problems.find((p) => p.kind === "Service" && p.namespace === "two");
    assert(named?.message.includes("already owned by the older Service one/web"), named?.message);
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});
