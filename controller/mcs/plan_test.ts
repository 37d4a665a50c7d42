import assert from "node:assert/strict";
import { type ExportRecord, exportRecord, isInvalidExport } from "../../lib/mcs/mod.ts";
import { planMcs } from "./plan.ts";
import { vipServiceName } from "../../lib/mcs/mod.ts";

const svc = (ns: string, name: string, spec = {}) => ({
  metadata: { namespace: ns, name },
  spec: { clusterIP: "10.96.0.9", ports: [{ name: "http", protocol: "TCP", port: 80 }], ...spec },
});
const exp = (ns: string, name: string) => ({
  metadata: { namespace: ns, name, creationTimestamp: "2026-12-05T10:00:00Z" },
});
function record(cluster: string, ns: string, name: string, spec = {}): ExportRecord {
  const r = exportRecord(cluster, exp(ns, name), svc(ns, name, spec));
  assert.ok(!isInvalidExport(r));
  return r;
}

Deno.test("mcs plan: a valid export is published and Pending until the registry has it", () => {
  const inputs = {
    cluster: "a.eu",
    exports: [exp("shop", "web")],
    services: [svc("shop", "web")],
    namespaces: new Set(["shop"]),
    registry: [] as ExportRecord[],
    slices: [{
      metadata: { namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
      addressType: "IPv4",
      ports: [{ name: "http", protocol: "TCP", port: 8080 }],
      endpoints: [{ addresses: ["10.1.0.5"], targetRef: { kind: "Pod", name: "web-1" } }],
    }],
    pods: new Map([["shop/web-1", { namespace: "shop", name: "web-1", serviceAccount: "web" }]]),
    trustDomain: "a.example",
    vipServiceName,
  };
  const before = planMcs(inputs);
  assert.deepEqual([...before.published.keys()], ["exports/shop/web", "eps/shop/web/web-1"]);
  assert.equal(
    JSON.parse(before.published.get("eps/shop/web/web-1")!).spiffeId,
    "spiffe://a.example/ns/shop/sa/web",
  );
  assert.deepEqual(
    JSON.parse(before.published.get("eps/shop/web/web-1")!).ports,
    [{ name: "http", protocol: "TCP", port: 8080, servicePort: 80 }],
    "each endpoint port says the exported Service's port (StrictPortConflict)",
  );
  assert.deepEqual(
    JSON.parse(before.published.get("exports/shop/web")!),
    record("a.eu", "shop", "web"),
  );
  assert.equal(JSON.parse(before.published.get("eps/shop/web/web-1")!).gateway, undefined);
  const gw = planMcs({ ...inputs, eastWestGateway: "192.0.2.7:15443" });
  assert.equal(
    JSON.parse(gw.published.get("eps/shop/web/web-1")!).gateway,
    "192.0.2.7:15443",
    "with --east-west-gateway every endpoint record names the gateway",
  );
  assert.deepEqual(before.imports, []);
  const ready = before.exportConditions.get("shop/web")!.find((c) => c.type === "Ready")!;
  assert.deepEqual([ready.status, ready.reason], ["False", "Pending"]);

  const after = planMcs({ ...inputs, registry: [record("a.eu", "shop", "web")] });
  const conds = after.exportConditions.get("shop/web")!;
  assert.deepEqual(conds.map((c) => `${c.type}=${c.status}/${c.reason}`), [
    "Valid=True/Valid",
    "Ready=True/Exported",
    "Conflict=False/NoConflicts",
  ]);
  assert.deepEqual(after.imports.map((i) => [i.namespace, i.name, i.vipService]), [
    ["shop", "web", vipServiceName("shop", "web")],
  ]);
});

Deno.test("mcs plan: imports only where the namespace exists; headless has no VIP Service", () => {
  const plan = planMcs({
    cluster: "a.eu",
    exports: [],
    services: [],
    namespaces: new Set(["shop"]),
    slices: [],
    pods: new Map(),
    registry: [
      record("b.eu", "shop", "db", { clusterIP: "None" }),
      record("b.eu", "other", "web"),
    ],
    vipServiceName,
  });
  assert.deepEqual(plan.imports.map((i) => [i.namespace, i.name, i.vipService]), [
    ["shop", "db", undefined],
  ]);
  assert.deepEqual([...plan.published.keys()], []);
});

Deno.test("mcs plan: an export without its Service is not published and says why", () => {
  const plan = planMcs({
    cluster: "a.eu",
    slices: [],
    pods: new Map(),
    exports: [exp("shop", "gone")],
    services: [],
    namespaces: new Set(["shop"]),
    registry: [],
    vipServiceName,
  });
  assert.deepEqual([...plan.published.keys()], []);
  assert.deepEqual(
    plan.exportConditions.get("shop/gone")!.map((c) => `${c.type}=${c.status}/${c.reason}`),
    ["Valid=False/NoService", "Ready=False/Failed"],
  );
});

Deno.test("mcs plan: VIP Service names are DNS labels, stable and distinct", () => {
  assert.match(vipServiceName("shop", "web"), /^mcs-[0-9a-f]{12}$/);
  assert.equal(vipServiceName("shop", "web"), vipServiceName("shop", "web"));
  assert.notEqual(vipServiceName("shop", "web"), vipServiceName("sho", "pweb"));
});
