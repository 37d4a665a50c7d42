import assert from "node:assert/strict";
import { clusterSetEndpoints } from "./clusterset_endpoints.ts";
import { ClusterSetIndex } from "./clusterset_index.ts";

/** One endpoint record of `<ns>/svc-<s>` in `cluster`, keyed as a registrar keys it. */
const record = (cluster: string, s: number, pod: number, ip = `10.0.${s}.${pod}`) =>
  [
    `eps/team/svc-${s}/pod-${pod}`,
    JSON.stringify({
      cluster,
      namespace: "team",
      service: `svc-${s}`,
      pod: `pod-${pod}`,
      ip,
      ports: [{ name: "http", protocol: "TCP", port: 8080 }],
    }),
  ] as const;

/** An origin's entries: `services` services × `pods` endpoints, plus an export record. */
function origin(cluster: string, services: number, pods: number): Map<string, string> {
  const out = new Map<string, string>([["exports/team/svc-0", "{}"]]);
  for (let s = 0; s < services; s++) {
    for (let p = 0; p < pods; p++) out.set(...record(cluster, s, p));
  }
  return out;
}

const eps = (...maps: Map<string, string>[]) =>
  maps.flatMap((m) => [...m].filter(([k]) => k.startsWith("eps/")).map(([, v]) => v));

Deno.test("ClusterSetIndex: the same lists as clusterSetEndpoints over every origin", () => {
  const a = origin("a.eu", 3, 2), b = origin("b.eu", 4, 2);
  b.set("eps/team/svc-9/broken", "{not json");
  const index = new ClusterSetIndex("a.eu");
  index.update("eu/a", a);
  index.update("eu/b", b);
  const whole = clusterSetEndpoints(eps(a, b), "a.eu");
  assert.deepEqual(new Map(index.byService()), whole.byService);
  assert.equal(index.skipped, whole.skipped);
  assert.equal(index.skipped, 1);
});

Deno.test("ClusterSetIndex: one changed record parses that service alone; the rest keep their lists", () => {
  const a = origin("a.eu", 50, 4), b = origin("b.eu", 50, 4);
  const index = new ClusterSetIndex("a.eu");
  index.update("eu/a", a);
  index.update("eu/b", b);
  const first = index.byService();
  const lists = new Map(first);
  const parsed = index.parsed;

  const next = new Map(b);
  next.set(...record("b.eu", 7, 1, "10.9.9.9"));
  index.update("eu/b", next);
  const after = index.byService();
  // The changed record, then svc-7's 8 records (4 per cluster) to make its list again.
  assert.equal(index.parsed - parsed, 1 + 8);
  assert.equal(after.size, 50);
  for (const [key, list] of after) {
    if (key === "team/svc-7") continue;
    assert.equal(list, lists.get(key), `${key} keeps its very list`);
  }
  const svc7 = after.get("team/svc-7")!;
  assert.notEqual(svc7, lists.get("team/svc-7"));
  assert.ok(svc7.some((e) => e.address === "10.9.9.9" && e.priority === 1));
  assert.ok(!svc7.some((e) => e.address === "10.0.7.1" && e.cluster === "b.eu"));
  assert.deepEqual(new Map(after), clusterSetEndpoints(eps(a, next), "a.eu").byService);

  // The same entries again: nothing parsed, nothing made.
  const settled = index.parsed;
  index.update("eu/b", new Map(next));
  index.byService();
  assert.equal(index.parsed, settled);
});

Deno.test("ClusterSetIndex: an origin that leaves takes its endpoints; malformed records uncounted", () => {
  const a = origin("a.eu", 2, 1), b = origin("b.eu", 3, 1);
  b.set("eps/team/svc-9/broken", "[]");
  const index = new ClusterSetIndex("a.eu");
  index.update("eu/a", a);
  index.update("eu/b", b);
  assert.equal(index.byService().size, 3);
  assert.equal(index.skipped, 1);
  index.update("eu/b", undefined);
  const left = index.byService();
  assert.deepEqual([...left.keys()].sort(), ["team/svc-0", "team/svc-1"]);
  assert.ok([...left.values()].every((l) => l.every((e) => e.cluster === "a.eu")));
  assert.equal(index.skipped, 0);
  assert.deepEqual(index.origins(), ["eu/a"]);
});
