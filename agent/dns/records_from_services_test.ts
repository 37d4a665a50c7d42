import assert from "node:assert/strict";
import { recordsFromServices, recordsFromServicesDetailed } from "./records_from_services.ts";

Deno.test("recordsFromServices: clusterIP(s) → A/AAAA; headless skipped", () => {
  const m = recordsFromServices([
    { metadata: { name: "Web", namespace: "a" }, spec: { clusterIP: "10.96.0.1" } },
    {
      metadata: { name: "dual", namespace: "a" },
      spec: { clusterIP: "10.96.0.2", clusterIPs: ["10.96.0.2", "fd00::2"] },
    },
    { metadata: { name: "v6", namespace: "a" }, spec: { clusterIPs: ["fd00::3"] } },
    { metadata: { name: "headless", namespace: "a" }, spec: { clusterIP: "None" } },
    { metadata: { name: "external", namespace: "a" }, spec: {} },
  ], "Mesh.Internal.");
  assert.deepEqual(m.get("web.mesh.internal"), { a: ["10.96.0.1"], aaaa: [] });
  assert.deepEqual(m.get("dual.mesh.internal"), { a: ["10.96.0.2"], aaaa: ["fd00::2"] });
  assert.deepEqual(m.get("v6.mesh.internal"), { a: [], aaaa: ["fd00::3"] });
  assert.equal(m.has("headless.mesh.internal"), false);
  assert.equal(m.size, 3);
});

Deno.test("recordsFromServices: conflicts → oldest creationTimestamp, then namespace", () => {
  const svc = (ns: string, ip: string, ts?: string) => ({
    metadata: { name: "api", namespace: ns, creationTimestamp: ts },
    spec: { clusterIP: ip },
  });
  const r = recordsFromServicesDetailed([
    svc("zeta", "10.0.0.1", "2024-01-01T00:00:00Z"),
    svc("alpha", "10.0.0.2", "2024-06-01T00:00:00Z"),
    svc("beta", "10.0.0.3"),
  ], "mesh.internal");
  assert.deepEqual(r.records.get("api.mesh.internal")?.a, ["10.0.0.1"]);
  assert.deepEqual(r.conflicts.map((c) => c.loser), ["alpha/api", "beta/api"]);
  const tie = recordsFromServices([
    svc("b", "10.0.0.5", "2024-01-01T00:00:00Z"),
    svc("a", "10.0.0.4", "2024-01-01T00:00:00Z"),
  ], "mesh.internal");
  assert.deepEqual(tie.get("api.mesh.internal")?.a, ["10.0.0.4"]);
  // Order of input never matters.
  const rev = recordsFromServices([
    svc("a", "10.0.0.4", "2024-01-01T00:00:00Z"),
    svc("b", "10.0.0.5", "2024-01-01T00:00:00Z"),
  ], "mesh.internal");
  assert.deepEqual(rev, tie);
});
