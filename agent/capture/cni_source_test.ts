import assert from "node:assert/strict";
import { join } from "node:path";
import { sourceContract } from "../../lib/source/_contract_test_utils.ts";
import type { SourceRevision } from "../../lib/source/mod.ts";
import { MergedSource } from "../../lib/engine/mod.ts";
import { MemorySource } from "../../testbed/memory_source.ts";
import { podsOnNode } from "../../lib/gatewayapi/mod.ts";
import type { PodAttachment } from "../../cni/mod.ts";
import { CniSource, parseRecord, recordOf } from "./cni_source.ts";

const attachment = (name: string, netnsPath: string): PodAttachment => ({
  namespace: "shop",
  name,
  uid: `uid-${name}`,
  containerId: `sandbox-${name}`,
  ifName: "eth0",
  netnsPath,
  ips: ["10.244.0.7"],
});

async function tempDirs() {
  const root = await Deno.makeTempDir({ prefix: "aether-cni-source-" });
  const netns = join(root, "netns");
  await Deno.mkdir(netns);
  for (const n of ["one", "two", "web", "api"]) await Deno.writeTextFile(join(netns, n), "");
  return { root, netns, dir: join(root, "state", "cni-pods") };
}

Deno.test("contract: CniSource (PodNetwork records)", async () => {
  const t = await tempDirs();
  try {
    // `one` is on disk before start: it is in the first revision.
    const seed = new CniSource({ dir: t.dir });
    await seed.attach(attachment("one", join(t.netns, "one")));
    await sourceContract(
      () => {
        const source = new CniSource({ dir: t.dir });
        return Promise.resolve({
          source,
          addTwo: () => source.attach(attachment("two", join(t.netns, "two"))),
        });
      },
      10_000,
      "PodNetwork",
    );
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("CniSource: DEL removes, a restarted source reloads, a gone netns is forgotten", async () => {
  const t = await tempDirs();
  try {
    const seen: SourceRevision[] = [];
    const a = new CniSource({ dir: t.dir });
    await a.start((r) => seen.push(r));
    assert.deepEqual(seen[0].objects, []);
    await a.attach(attachment("web", join(t.netns, "web")));
    await a.attach(attachment("api", join(t.netns, "api")));
    await a.attach(attachment("gone", join(t.netns, "gone")));
    const last = () => seen[seen.length - 1];
    assert.deepEqual(last().objects.map((o) => o.metadata.name), ["api", "gone", "web"]);
    assert.deepEqual(last().kinds, ["PodNetwork"]);
    assert.equal(last().admitted, true);
    await a.detach("sandbox-api", "eth0");
    assert.deepEqual(last().objects.map((o) => o.metadata.name), ["gone", "web"]);
    const count = seen.length;
    await a.detach("sandbox-api", "eth0");
    assert.equal(seen.length, count, "a repeated DEL changes nothing");
    await a.detach("sandbox-web", "eth1");
    assert.equal(seen.length, count, "another interface's DEL changes nothing");
    await a.stop();

    // A new agent: the records on disk are its first revision; `gone`'s netns does not exist (its
    // folder does): a DEL missed while no agent ran, forgotten.
    const b = new CniSource({ dir: t.dir });
    const again: SourceRevision[] = [];
    await b.start((r) => again.push(r));
    assert.equal(again.length, 1);
    assert.deepEqual(again[0].objects, [recordOf(attachment("web", join(t.netns, "web")))]);
    assert.deepEqual(b.attachment("sandbox-web", "eth0"), attachment("web", join(t.netns, "web")));
    assert.deepEqual([...Deno.readDirSync(t.dir)].map((e) => e.name), ["shop_web.json"]);
    await b.stop();
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("CniSource: a netns whose folder is not mounted is kept; junk files are ignored", async () => {
  const t = await tempDirs();
  try {
    const a = new CniSource({ dir: t.dir });
    await a.attach(attachment("web", "/no/such/mount/cni-web"));
    await Deno.writeTextFile(join(t.dir, "junk.json"), '{"kind":"Pod"}');
    const b = new CniSource({ dir: t.dir });
    const seen: SourceRevision[] = [];
    await b.start((r) => seen.push(r));
    assert.deepEqual(seen[0].objects.map((o) => o.metadata.name), ["web"]);
    assert.equal(parseRecord("{"), undefined);
    assert.equal(parseRecord('{"kind":"PodNetwork"}'), undefined);
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});

Deno.test("CniSource in a MergedSource: the node's pods get their netns from the records", async () => {
  const t = await tempDirs();
  try {
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web", namespace: "shop", uid: "uid-web" },
      spec: { nodeName: "n1" },
      status: { phase: "Pending" },
    };
    const cni = new CniSource({ dir: t.dir });
    const merged = new MergedSource([
      { origin: "kube", source: new MemorySource([pod]) },
      { origin: "cni", source: cni },
    ]);
    const seen: SourceRevision[] = [];
    await merged.start((r) => seen.push(r));
    assert.deepEqual(podsOnNode(seen[seen.length - 1].objects, "n1"), []);
    await cni.attach(attachment("web", join(t.netns, "web")));
    const last = seen[seen.length - 1];
    assert.deepEqual(podsOnNode(last.objects, "n1"), [{
      namespace: "shop",
      name: "web",
      netnsPath: join(t.netns, "web"),
      ip: "10.244.0.7",
      serviceAccount: "default",
    }]);
    assert.equal(last.origins.get("PodNetwork/shop/web"), `cni:${join(t.dir, "shop_web.json")}`);
    await merged.stop();
  } finally {
    await Deno.remove(t.root, { recursive: true });
  }
});
