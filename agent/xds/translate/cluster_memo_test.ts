import assert from "node:assert/strict";
import type { IRCluster } from "../../../lib/ir/mod.ts";
import { translate, TranslateMemo } from "./mod.ts";
import { goldenCases } from "./_test_utils.ts";

const ir = (clusters: IRCluster[]) => ({ listeners: [], clusters, secrets: [] });
const endpoints = [{ address: "10.0.0.1", port: 8080 }];
const base: IRCluster = { name: "a.mesh", service: "ns/a", port: 80, protocol: "http1", endpoints };

Deno.test("a cluster whose fields did not change is the same resource object; a change is seen", () => {
  const memo = new TranslateMemo();
  const first = translate(ir([base]), {}, memo);
  const again = translate(ir([{ ...base }]), {}, memo);
  assert.equal(again.clusters[0], first.clusters[0]);
  assert.equal(again.endpoints[0], first.endpoints[0]);
  const h2 = translate(ir([{ ...base, protocol: "http2" }]), {}, memo);
  assert.notEqual(h2.clusters[0], first.clusters[0]);
  assert.deepEqual(h2.clusters[0], translate(ir([{ ...base, protocol: "http2" }])).clusters[0]);
  assert.equal(h2.endpoints[0], first.endpoints[0], "same endpoints array: same assignment");
  const moved = [{ address: "10.0.0.2", port: 8080 }];
  const next = translate(ir([{ ...base, protocol: "http2", endpoints: moved }]), {}, memo);
  assert.equal(next.clusters[0], h2.clusters[0]);
  assert.notEqual(next.endpoints[0], h2.endpoints[0]);
  assert.deepEqual(next.endpoints[0], translate(ir([{ ...base, endpoints: moved }])).endpoints[0]);
  const timeout = translate(ir([{ ...base, protocol: "http2" }]), { connectTimeoutMs: 1 }, memo);
  assert.notEqual(timeout.clusters[0], h2.clusters[0], "options are part of the inputs");
  const ids = { ...base, identities: ["spiffe://t/a"] };
  const mtls = { callerId: "spiffe://t/c", trustDomain: "t" };
  const withIds = translate(ir([ids]), { mtls }, memo);
  assert.equal(
    translate(ir([{ ...ids, identities: ["spiffe://t/a"] }]), { mtls }, memo).clusters[0],
    withIds.clusters[0],
  );
  assert.notEqual(
    translate(ir([{ ...ids, identities: ["spiffe://t/b"] }]), { mtls }, memo).clusters[0],
    withIds.clusters[0],
  );
});

Deno.test("a memoized translate equals a cold one for every golden case, twice over", () => {
  const memo = new TranslateMemo();
  for (const { name, ir } of [...goldenCases(), ...goldenCases()]) {
    assert.deepEqual(translate(ir, {}, memo), translate(structuredClone(ir)), name);
  }
});

Deno.test("clusters are compared by position first; a name index only when the list moved", () => {
  const memo = new TranslateMemo();
  const many = Array.from({ length: 300 }, (_, i) => ({ ...base, name: `c${i}.mesh` }));
  const first = translate(ir(many), {}, memo);
  const p0 = memo.clusters.positionStats();
  // New IR objects (as resolve makes them), same fields: found in place, the same resources.
  const again = translate(ir(many.map((c) => ({ ...c }))), {}, memo);
  const p1 = memo.clusters.positionStats();
  assert.equal(p1.misses, p0.misses, "no cluster looked up by name");
  assert.equal(p1.hits - p0.hits, 300);
  assert.ok(again.clusters.every((r, i) => r === first.clusters[i]));
  // Reordered: looked up by name, still the same resources, output as a cold translation's.
  const reversed = translate(ir(many.toReversed().map((c) => ({ ...c }))), {}, memo);
  assert.ok(memo.clusters.positionStats().misses > p1.misses);
  assert.ok(reversed.clusters.every((r, i) => r === first.clusters[i]), "sorted by name");
  assert.deepEqual(reversed, translate(structuredClone(ir(many.toReversed()))));
});
