import assert from "node:assert/strict";
import { compareRanked, grpcMatchKey, httpMatchKey, type Ranked } from "./precedence.ts";
import type { KubeObject } from "../types.ts";
import type { IRRouteMatch } from "../../ir/mod.ts";

const route = (name: string, creationTimestamp?: string): KubeObject => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: "ns", ...(creationTimestamp ? { creationTimestamp } : {}) },
});

const m = (
  type: IRRouteMatch["path"]["type"],
  value: string,
  extra: Partial<IRRouteMatch> = {},
): IRRouteMatch => ({
  path: { type, value },
  headers: [],
  queryParams: [],
  ...extra,
});

const kv = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ name: `h${i}`, type: "Exact" as const, value: "v" }));

Deno.test("precedence: HTTPRoute match order", () => {
  const r = route("r");
  const entries: [string, IRRouteMatch][] = [
    ["query", m("PathPrefix", "/a", { queryParams: kv(1) })],
    ["plain", m("PathPrefix", "/a")],
    ["headers2", m("PathPrefix", "/a", { headers: kv(2) })],
    ["method", m("PathPrefix", "/a", { method: "GET" })],
    ["longer", m("PathPrefix", "/a/b")],
    ["regex", m("RegularExpression", "/a.*")],
    ["exact", m("Exact", "/a")],
    ["headers1", m("PathPrefix", "/a", { headers: kv(1), queryParams: kv(3) })],
  ];
  const ranked = entries.map(([label, match], i): Ranked & { label: string } => ({
    label,
    hostname: "*",
    key: httpMatchKey(match),
    route: r,
    rule: i,
    match: 0,
  }));
  assert.deepEqual(ranked.sort(compareRanked).map((e) => e.label), [
    "exact",
    "regex",
    "longer",
    "method",
    "headers2",
    "headers1",
    "query",
    "plain",
  ]);
});

Deno.test("precedence: hostname, then age, then namespace/name, then rule and match order", () => {
  const key = httpMatchKey(m("PathPrefix", "/"));
  const e = (label: string, r: KubeObject, hostname = "*", rule = 0, match = 0) => ({
    label,
    hostname,
    key,
    route: r,
    rule,
    match,
  });
  const list = [
    e("young", route("a", "2024-02-01T00:00:00Z")),
    e("old", route("z", "2024-01-01T00:00:00Z")),
    e("same-age-b", route("b", "2024-02-01T00:00:00Z")),
    e("rule1", route("z", "2024-01-01T00:00:00Z"), "*", 1),
    e("match1", route("z", "2024-01-01T00:00:00Z"), "*", 0, 1),
    e("exact-host", route("y", "2025-01-01T00:00:00Z"), "foo.example.com"),
    e("wild-host", route("y", "2025-01-01T00:00:00Z"), "*.example.com"),
  ];
  assert.deepEqual(list.sort(compareRanked).map((x) => x.label), [
    "exact-host",
    "wild-host",
    "old",
    "match1",
    "rule1",
    "young",
    "same-age-b",
  ]);
});

Deno.test("precedence: GRPCRoute service, then method, then headers", () => {
  const keys = [
    grpcMatchKey(undefined, "Check", 0),
    grpcMatchKey("pkg.Svc", undefined, 2),
    grpcMatchKey("pkg.Svc", "Method", 0),
    grpcMatchKey("pkg.Svc", undefined, 0),
  ];
  const order = keys.map((key, i) => ({ i, key })).sort((a, b) => {
    for (let j = 0; j < a.key.length; j++) if (a.key[j] !== b.key[j]) return a.key[j] - b.key[j];
    return 0;
  });
  assert.deepEqual(order.map((o) => o.i), [2, 1, 3, 0]);
});
