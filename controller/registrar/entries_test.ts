import assert from "node:assert/strict";
import {
  type ActualEntry,
  desiredEntries,
  type EntrySpec,
  OWNER_HINT,
  planEntries,
  planIsEmpty,
} from "./entries.ts";

const base = { trustDomain: "cluster.local", clusterName: "aether", svidTtlSeconds: 3600 };

function desired(...sas: [string, string][]): EntrySpec[] {
  return desiredEntries({
    ...base,
    serviceAccounts: sas.map(([namespace, name]) => ({ namespace, name })),
  });
}

/** The server's copy of each spec, with ids e1, e2, … */
function stored(specs: EntrySpec[], prefix = "e"): ActualEntry[] {
  return specs.map((s, i) => ({
    ...s,
    selectors: [...s.selectors].reverse(),
    id: `${prefix}${i}`,
  }));
}

Deno.test("desiredEntries: the cluster alias, then one entry per ServiceAccount under it", () => {
  const d = desiredEntries({
    ...base,
    serviceAccounts: [
      { namespace: "shop", name: "web" },
      { namespace: "kube-system", name: "coredns" },
      { namespace: "a", name: "default" },
      { namespace: "shop", name: "web" },
    ],
    excludeNamespaces: ["kube-system"],
  });
  assert.deepEqual(d, [
    {
      spiffeId: "spiffe://cluster.local/aether/cluster/aether",
      parentId: "spiffe://cluster.local/spire/server",
      selectors: ["k8s_psat:cluster:aether"],
      x509SvidTtl: 3600,
      admin: false,
      downstream: false,
      hint: OWNER_HINT,
    },
    {
      spiffeId: "spiffe://cluster.local/ns/a/sa/default",
      parentId: "spiffe://cluster.local/aether/cluster/aether",
      selectors: ["k8s:ns:a", "k8s:sa:default"],
      x509SvidTtl: 3600,
      admin: false,
      downstream: false,
      hint: OWNER_HINT,
    },
    {
      spiffeId: "spiffe://cluster.local/ns/shop/sa/web",
      parentId: "spiffe://cluster.local/aether/cluster/aether",
      selectors: ["k8s:ns:shop", "k8s:sa:web"],
      x509SvidTtl: 3600,
      admin: false,
      downstream: false,
      hint: OWNER_HINT,
    },
  ]);
});

Deno.test("desiredEntries: refuses a trust domain or cluster name that makes no SPIFFE ID", () => {
  assert.throws(() => desiredEntries({ ...base, trustDomain: "Bad/TD", serviceAccounts: [] }));
  assert.throws(() => desiredEntries({ ...base, clusterName: "a/b", serviceAccounts: [] }));
});

Deno.test("planEntries: everything missing is created; nothing on an empty server is deleted", () => {
  const d = desired(["ns1", "a"], ["ns1", "b"]);
  const plan = planEntries(d, []);
  assert.deepEqual(plan.create, d);
  assert.deepEqual([plan.update, plan.delete, plan.shadowed], [[], [], []]);
});

Deno.test("planEntries: in sync (selectors in any order) is an empty plan", () => {
  const d = desired(["ns1", "a"], ["ns1", "b"]);
  const plan = planEntries(d, stored(d));
  assert.ok(planIsEmpty(plan), JSON.stringify(plan));
  assert.deepEqual(plan.shadowed, []);
});

Deno.test("planEntries: a gone ServiceAccount's entry is deleted, a new one's created", () => {
  const before = desired(["ns1", "a"], ["ns1", "b"]);
  const actual = stored(before);
  const plan = planEntries(desired(["ns1", "a"], ["ns2", "c"]), actual);
  assert.deepEqual(plan.delete.map((e) => e.spiffeId), ["spiffe://cluster.local/ns/ns1/sa/b"]);
  assert.deepEqual(plan.create.map((e) => e.spiffeId), ["spiffe://cluster.local/ns/ns2/sa/c"]);
  assert.deepEqual(plan.update, []);
});

Deno.test("planEntries: entries without aether's hint are never touched", () => {
  const d = desired(["ns1", "a"]);
  const foreign: ActualEntry[] = [
    // Not wanted: left alone anyway.
    { ...d[1], spiffeId: "spiffe://cluster.local/other", hint: "", id: "f1" },
    { ...d[1], spiffeId: "spiffe://cluster.local/ns/x/sa/y", hint: "someone-else", id: "f2" },
  ];
  const plan = planEntries(d, [...stored(d), ...foreign]);
  assert.ok(planIsEmpty(plan));
  // Removing everything of ours still leaves them.
  const gone = planEntries([], [...stored(d), ...foreign]);
  assert.deepEqual(gone.delete.map((e) => e.id), ["e0", "e1"]);
});

Deno.test("planEntries: a wanted entry a foreign entry already provides is shadowed, not created", () => {
  const d = desired(["ns1", "a"]);
  const foreign: ActualEntry = { ...d[1], hint: "", x509SvidTtl: 60, id: "f1" };
  const plan = planEntries(d, [foreign]);
  assert.deepEqual(plan.create, [d[0]]);
  assert.deepEqual(plan.shadowed, [d[1]]);
  assert.deepEqual([plan.update, plan.delete], [[], []]);
});

Deno.test("planEntries: duplicates of ours keep one (the right one if any), the rest go", () => {
  const d = desired(["ns1", "a"]);
  const sa = d[1];
  const actual: ActualEntry[] = [
    ...stored([d[0]], "alias"),
    { ...sa, x509SvidTtl: 60, id: "a1" },
    { ...sa, id: "b2" },
    { ...sa, id: "c3" },
  ];
  const plan = planEntries(d, actual);
  assert.deepEqual(plan.delete.map((e) => e.id), ["a1", "c3"]);
  assert.deepEqual([plan.create, plan.update], [[], []]);
  // None right: the lowest id is kept and updated.
  const wrong = planEntries(d, [
    ...stored([d[0]], "alias"),
    { ...sa, x509SvidTtl: 60, id: "b" },
    { ...sa, x509SvidTtl: 30, id: "a" },
  ]);
  assert.deepEqual(wrong.delete.map((e) => e.id), ["b"]);
  assert.deepEqual(wrong.update, [{ ...sa, id: "a" }]);
});

Deno.test("planEntries: a TTL change updates each entry in place (same ids), deletes nothing", () => {
  const old = stored(desired(["ns1", "a"], ["ns1", "b"]));
  const d = desiredEntries({
    ...base,
    svidTtlSeconds: 600,
    serviceAccounts: [{ namespace: "ns1", name: "a" }, { namespace: "ns1", name: "b" }],
  });
  const plan = planEntries(d, old);
  assert.deepEqual(plan.update.map((e) => [e.id, e.x509SvidTtl]), [["e0", 600], ["e1", 600], [
    "e2",
    600,
  ]]);
  assert.deepEqual([plan.create, plan.delete], [[], []]);
});

Deno.test("planEntries: an entry of ours made admin is set back; a changed parent is replaced", () => {
  const d = desired(["ns1", "a"]);
  const actual = stored(d);
  actual[1] = { ...actual[1], admin: true };
  assert.deepEqual(planEntries(d, actual).update, [{ ...d[1], id: "e1" }]);
  // Another cluster name: new alias and new parents; the old ones go.
  const moved = desiredEntries({
    ...base,
    clusterName: "east",
    serviceAccounts: [{ namespace: "ns1", name: "a" }],
  });
  const plan = planEntries(moved, stored(d));
  assert.deepEqual(plan.delete.map((e) => e.id), ["e0", "e1"]);
  assert.deepEqual(plan.create, moved);
});
