import { assertEquals } from "../../testbed/assert.ts";
import { MemorySource } from "../../testbed/memory_source.ts";
import { contractService, sourceContract } from "../source/_contract_test_utils.ts";
import type { SourceRevision } from "../source/mod.ts";
import { MergedSource, mergeRevisions } from "./merged_source.ts";

Deno.test("merged source: passes the Source contract", async () => {
  await sourceContract(() => {
    const local = new MemorySource([contractService("one")]);
    const remote = new MemorySource();
    const source = new MergedSource([
      { origin: "local", source: local },
      { origin: "eu/west", source: remote },
    ]);
    return Promise.resolve({
      source,
      addTwo: () => Promise.resolve(remote.apply(contractService("two"))),
    });
  });
});

Deno.test("merged source: the first revision holds every partition's first", async () => {
  const seen: SourceRevision[] = [];
  const source = new MergedSource([
    { origin: "a", source: new MemorySource([contractService("one")]) },
    { origin: "b", source: new MemorySource([contractService("two")]) },
  ]);
  await source.start((r) => seen.push(r));
  assertEquals(seen.length, 1);
  assertEquals(seen[0].objects.map((o) => o.metadata.name), ["one", "two"]);
  assertEquals([...seen[0].origins.values()], ["a:memory", "b:memory"]);
  await source.stop();
});

const rev = (r: Partial<SourceRevision>): SourceRevision => ({
  revision: 1,
  objects: [],
  problems: [],
  origins: new Map(),
  ...r,
});

Deno.test("mergeRevisions: keys are partitioned by origin; the first partition's object is served", () => {
  const mine = contractService("web", "shop");
  const theirs = contractService("web", "shop");
  const merged = mergeRevisions(7, [
    ["kube", rev({ objects: [mine], origins: new Map([["Service/shop/web", "api"]]) })],
    ["eu/west", rev({ objects: [theirs], origins: new Map([["Service/shop/web", "etcd"]]) })],
  ]);
  assertEquals(merged.revision, 7);
  assertEquals(merged.objects.length, 1);
  assertEquals(merged.objects[0] === mine, true, "the very same object is handed over");
  assertEquals(merged.origins.get("Service/shop/web"), "kube:api");
  assertEquals(merged.problems.map((p) => `${p.source}: ${p.message}`), [
    "eu/west:etcd: also defined by kube; the one from kube is served, not this one",
  ]);
});

Deno.test("mergeRevisions: kinds are the union (absent = every kind); admitted only if all are", () => {
  const a = rev({ kinds: ["Service", "HTTPRoute"], admitted: true });
  const b = rev({ kinds: ["ServiceImport"], admitted: true });
  assertEquals(mergeRevisions(1, [["a", a], ["b", b]]).kinds, [
    "HTTPRoute",
    "Service",
    "ServiceImport",
  ]);
  assertEquals(mergeRevisions(1, [["a", a], ["b", b]]).admitted, true);
  const files = rev({});
  assertEquals(mergeRevisions(1, [["a", a], ["files", files]]).kinds, undefined);
  assertEquals(mergeRevisions(1, [["a", a], ["files", files]]).admitted, undefined);
});
