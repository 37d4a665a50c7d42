import assert from "node:assert/strict";
import {
  exportRecord,
  isInvalidExport,
  parseExportRecord,
  type ServiceShape,
} from "./export_record.ts";
import { mergeExports } from "./merge.ts";
import type { ExportRecord } from "./types.ts";

/** The conformance suite's `hello` Service: tcp/42 + udp/42, ClientIP affinity. */
function hello(over: Partial<NonNullable<ServiceShape["spec"]>> = {}): ServiceShape {
  return {
    metadata: { namespace: "ns", name: "hello" },
    spec: {
      type: "ClusterIP",
      clusterIP: "10.96.0.10",
      ports: [{ name: "tcp", protocol: "TCP", port: 42 }, {
        name: "udp",
        protocol: "UDP",
        port: 42,
      }],
      sessionAffinity: "ClientIP",
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
      ipFamilies: ["IPv4"],
      internalTrafficPolicy: "Cluster",
      ...over,
    },
  };
}

function exported(cluster: string, at: string, svc: ServiceShape, labels = {}): ExportRecord {
  const r = exportRecord(cluster, {
    metadata: { namespace: "ns", name: "hello", creationTimestamp: at },
    spec: { exportedLabels: labels },
  }, svc);
  assert.ok(!isInvalidExport(r), JSON.stringify(r));
  return r;
}

const T0 = "2026-12-05T10:00:00Z";
const T1 = "2026-12-05T10:00:02Z";

Deno.test("mcs merge: one ClusterIP export is a ClusterSetIP import with the Service's ports and policies", () => {
  const m = mergeExports([exported("a.eu", T0, hello({ trafficDistribution: "PreferClose" }))]);
  assert.deepEqual(m.spec, {
    type: "ClusterSetIP",
    ports: [{ name: "tcp", protocol: "TCP", port: 42 }, { name: "udp", protocol: "UDP", port: 42 }],
    sessionAffinity: "ClientIP",
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
    ipFamilies: ["IPv4"],
    internalTrafficPolicy: "Cluster",
    trafficDistribution: "PreferClose",
  });
  assert.deepEqual(m.clusters, ["a.eu"]);
  assert.deepEqual(m.conflicts, []);
});

Deno.test("mcs merge: the same Service in two clusters has no conflict and lists both clusters", () => {
  const m = mergeExports([exported("b.eu", T1, hello()), exported("a.eu", T0, hello())]);
  assert.deepEqual(m.clusters, ["a.eu", "b.eu"]);
  assert.deepEqual(m.conflicts, []);
});

Deno.test("mcs merge: different ports are a union and a PortConflict (the conformance union spec)", () => {
  const sctp = hello({
    ports: [{ name: "tcp", protocol: "TCP", port: 42 }, {
      name: "sctp",
      protocol: "SCTP",
      port: 142,
    }],
  });
  const m = mergeExports([exported("a.eu", T0, hello()), exported("b.eu", T1, sctp)]);
  assert.deepEqual(m.spec.ports.map((p) => `${p.name}/${p.protocol}/${p.port}`), [
    "tcp/TCP/42",
    "udp/UDP/42",
    "sctp/SCTP/142",
  ]);
  assert.deepEqual(m.conflicts.map((c) => c.reason), ["PortConflict"]);
});

Deno.test("mcs merge: one port name with two numbers: the oldest export's wins, PortConflict", () => {
  const other = hello({
    ports: [{ name: "tcp", protocol: "TCP", port: 4242 }, {
      name: "udp",
      protocol: "UDP",
      port: 42,
    }],
  });
  // Given newest first: the order comes from the export times, not the input order.
  const m = mergeExports([exported("b.eu", T0, other), exported("a.eu", T1, hello())]);
  assert.deepEqual(m.spec.ports.find((p) => p.name === "tcp")?.port, 4242);
  assert.deepEqual(m.conflicts.map((c) => c.reason), ["PortConflict"]);
  assert.match(m.conflicts[0].message, /cluster "b\.eu"/);
});

Deno.test("mcs merge: ClusterIP against headless: TypeConflict, the oldest's type", () => {
  const m = mergeExports([
    exported("a.eu", T0, hello()),
    exported("b.eu", T1, hello({ clusterIP: "None" })),
  ]);
  assert.equal(m.spec.type, "ClusterSetIP");
  assert.deepEqual(m.conflicts.map((c) => c.reason), ["TypeConflict"]);
  assert.match(m.conflicts[0].message, /1\/2 exporting clusters disagree on type/);
});

Deno.test("mcs merge: equal export times order by cluster id", () => {
  const m = mergeExports([
    exported("b.eu", T0, hello({ sessionAffinity: "None", sessionAffinityConfig: undefined })),
    exported("a.eu", T0, hello()),
  ]);
  assert.equal(m.spec.sessionAffinity, "ClientIP");
  assert.deepEqual(m.conflicts.map((c) => c.reason), [
    "SessionAffinityConflict",
    "SessionAffinityConfigConflict",
  ]);
});

Deno.test("mcs merge: exported labels: the oldest's, LabelsConflict when they differ", () => {
  const m = mergeExports([
    exported("a.eu", T0, hello(), { team: "a" }),
    exported("b.eu", T1, hello(), { team: "b" }),
  ]);
  assert.deepEqual(m.labels, { team: "a" });
  assert.deepEqual(m.conflicts.map((c) => c.reason), ["LabelsConflict"]);
  // Same nested values in another key order are no conflict.
  const n = mergeExports([
    exported("a.eu", T0, hello({ sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } } })),
    exported("b.eu", T1, hello({ sessionAffinityConfig: { clientIP: { timeoutSeconds: 11 } } })),
  ]);
  assert.deepEqual(n.conflicts.map((c) => c.reason), ["SessionAffinityConfigConflict"]);
});

Deno.test("mcs export: headless is Headless; ExternalName and a missing Service are not exported", () => {
  assert.equal(exported("a.eu", T0, hello({ clusterIP: "None" })).type, "Headless");
  const ext = exportRecord(
    "a.eu",
    { metadata: { namespace: "ns", name: "hello" } },
    hello({ type: "ExternalName" }),
  );
  assert.ok(isInvalidExport(ext) && ext.reason === "InvalidServiceType");
  const none = exportRecord("a.eu", { metadata: { namespace: "ns", name: "hello" } }, undefined);
  assert.ok(isInvalidExport(none) && none.reason === "NoService");
});

Deno.test("mcs export: a registry value is read back only when it is a whole record", () => {
  const r = exported("a.eu", T0, hello());
  assert.deepEqual(parseExportRecord(JSON.stringify(r)), r);
  for (
    const bad of [
      "",
      "null",
      "[]",
      "{}",
      JSON.stringify({ ...r, type: "LoadBalancer" }),
      JSON.stringify({ ...r, ports: [{ protocol: "TCP", port: "42" }] }),
      JSON.stringify({ ...r, labels: undefined }),
    ]
  ) {
    assert.equal(parseExportRecord(bad), undefined, bad);
  }
});
