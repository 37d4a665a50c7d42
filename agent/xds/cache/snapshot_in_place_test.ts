/**
 * A list with the same names at the same positions as its type's last one is encoded in place:
 * only its new resource objects are encoded, the rest's items are reused, and the type's version
 * (the sum of its resources' shares) moves by the edited resources' share deltas. What is served
 * equals a cold encoding of the same lists, and the older snapshot stays as it was.
 */
import assert from "node:assert/strict";
import { TypeUrl } from "../proto.ts";
import { EncodeMetrics } from "./encode_metrics.ts";
import { Registry } from "../../../lib/metrics/mod.ts";
import { Encodings, type NamedResource, shareOf, Snapshot } from "./snapshot.ts";

const cluster = (name: string, seconds = 1): NamedResource => ({
  name,
  resource: { name, type: 3, connect_timeout: { seconds } },
});

const clusters = (n: number) => Array.from({ length: n }, (_, i) => cluster(`c${i}`));

/** Every cluster's name and hash, in the snapshot's order. */
const hashes = (s: Snapshot) =>
  [...s.resources(TypeUrl.cluster).items].map(([name, r]) => `${name}=${r.hash}`);

const cold = (list: NamedResource[]) => Snapshot.fromResources(structuredClone({ clusters: list }));

Deno.test("snapshot in place: an edit encodes the edited resource alone; the rest is reused", () => {
  const metrics = new EncodeMetrics(new Registry());
  const encodings = new Encodings(metrics);
  const list = clusters(200);
  const first = Snapshot.fromResources({ clusters: list }, undefined, encodings);
  const before = hashes(first);
  const lists = { ...encodings.lists }, misses = encodings.resources.misses;

  const edited = list.with(120, cluster("c120", 9));
  const second = Snapshot.fromResources({ clusters: edited }, undefined, encodings);
  assert.equal(encodings.lists.misses, lists.misses, "no list encoded whole");
  assert.equal(encodings.lists.hits, lists.hits + 7, "every type's list encoded in place");
  assert.equal(encodings.resources.misses, misses + 1, "one resource encoded");
  assert.equal(metrics.encoded.get({ type_url: TypeUrl.cluster }), 201);
  assert.equal(metrics.reused.get({ type_url: TypeUrl.cluster }), 199);

  const items = second.resources(TypeUrl.cluster).items;
  assert.equal(items.get("c119"), first.resources(TypeUrl.cluster).items.get("c119"));
  assert.notEqual(
    items.get("c120")!.hash,
    first.resources(TypeUrl.cluster).items.get("c120")!.hash,
  );
  assert.deepEqual(hashes(second), hashes(cold(edited)), "what a cold encoding gives, in order");
  assert.equal(second.version, cold(edited).version);
  assert.deepEqual(hashes(first), before, "the older snapshot is unchanged");

  // The same list again: the very same TypeResources, nothing encoded.
  const third = Snapshot.fromResources({ clusters: edited }, undefined, encodings);
  assert.equal(third.resources(TypeUrl.cluster), second.resources(TypeUrl.cluster));
  assert.equal(encodings.resources.misses, misses + 1);
});

Deno.test("snapshot versions: order-free, and an edit moves the sum by the resource's share delta", () => {
  const list = clusters(50);
  const a = Snapshot.fromResources({ clusters: list });
  assert.equal(
    a.typeVersion(TypeUrl.cluster),
    Snapshot.fromResources({ clusters: list.toReversed() }).typeVersion(TypeUrl.cluster),
  );
  const encodings = new Encodings();
  const first = Snapshot.fromResources({ clusters: list }, undefined, encodings);
  const second = Snapshot.fromResources(
    { clusters: list.with(7, cluster("c7", 3)) },
    undefined,
    encodings,
  );
  const old = first.resources(TypeUrl.cluster).items.get("c7")!;
  const now = second.resources(TypeUrl.cluster).items.get("c7")!;
  assert.equal(old.share, shareOf("c7", old.hash));
  const sum = (s: Snapshot) => BigInt(`0x${s.typeVersion(TypeUrl.cluster)}`);
  const mod = 2n ** 52n;
  assert.equal(
    sum(second),
    ((sum(first) - BigInt(old.share) + BigInt(now.share)) % mod + mod) % mod,
    "the version moved by the edited resource's share delta",
  );
  // Two resources swapping their contents change the version (a share hashes name and content).
  const swapped = [cluster("c0", 2), cluster("c1", 1)];
  assert.notEqual(
    Snapshot.fromResources({ clusters: swapped }).typeVersion(TypeUrl.cluster),
    Snapshot.fromResources({ clusters: [cluster("c0", 1), cluster("c1", 2)] }).typeVersion(
      TypeUrl.cluster,
    ),
  );
});

Deno.test("snapshot in place: a renamed or bad resource falls back to encoding the list whole", () => {
  const encodings = new Encodings();
  const list = clusters(20);
  Snapshot.fromResources({ clusters: list }, undefined, encodings);
  const whole = encodings.lists.misses;
  const renamed = list.with(5, cluster("zz"));
  const s = Snapshot.fromResources({ clusters: renamed }, undefined, encodings);
  assert.equal(encodings.lists.misses, whole + 1);
  assert.deepEqual(hashes(s), hashes(cold(renamed)));

  const bad: string[] = [];
  const broken = renamed.with(3, { name: "c3", resource: { type: "bogus" } });
  const t = Snapshot.fromResources(
    { clusters: broken },
    (_type, name) => bad.push(name),
    encodings,
  );
  assert.deepEqual(bad, ["c3"], "reported once, left out");
  assert.equal(t.resources(TypeUrl.cluster).items.size, 19);
  // As many as were encoded, the same objects at the same positions, but not where they were
  // encoded (one was left out): not taken as unchanged.
  const shorter = Snapshot.fromResources(
    { clusters: broken.slice(0, 19) },
    (_type, name) => bad.push(name),
    encodings,
  );
  assert.deepEqual(bad, ["c3", "c3"]);
  assert.deepEqual(
    [...shorter.resources(TypeUrl.cluster).items.keys()],
    broken.slice(0, 19).map((r) => r.name).filter((n) => n !== "c3"),
  );
  const fixed = Snapshot.fromResources({ clusters: renamed }, undefined, encodings);
  assert.deepEqual(hashes(fixed), hashes(s));
  assert.equal(fixed.version, s.version);
});

Deno.test("snapshot shifted: a list with one resource inserted or taken out reuses the rest, as a cold encoding gives", () => {
  const encodings = new Encodings();
  let list = clusters(120);
  let last = Snapshot.fromResources({ clusters: list }, undefined, encodings);
  let seed = 5;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31);
  for (let k = 0; k < 60; k++) {
    const lists = { ...encodings.lists }, misses = encodings.resources.misses;
    const at = next() % (list.length + (k % 2 === 0 ? 1 : 0));
    // Inserted (a new name, or one edited beside it too), or taken out.
    const grown = k % 2 === 0;
    list = grown ? list.toSpliced(at, 0, cluster(`n${k}`, 2)) : list.toSpliced(at, 1);
    if (k % 6 === 0) list = list.with(0, cluster(list[0].name, 3 + k));
    const snap = Snapshot.fromResources({ clusters: list }, undefined, encodings);
    const shown = `${grown ? "insert" : "remove"} ${k} at ${at}`;
    assert.deepEqual(hashes(snap), hashes(cold(list)), `${shown}: as a cold encoding, in order`);
    assert.equal(snap.version, cold(list).version, shown);
    assert.equal(encodings.lists.misses, lists.misses, `${shown}: no list encoded whole`);
    const encoded = (grown ? 1 : 0) + (k % 6 === 0 ? 1 : 0);
    assert.equal(encodings.resources.misses, misses + encoded, `${shown}: ${encoded} encoded`);
    assert.ok(
      [...snap.resources(TypeUrl.cluster).items.values()].every((r) =>
        r.name === list[0].name || !last.resources(TypeUrl.cluster).items.has(r.name) ||
        last.resources(TypeUrl.cluster).items.get(r.name) === r
      ),
      `${shown}: the others are the last items`,
    );
    last = snap;
  }
  // An inserted name that is there already: encoded whole, the duplicate reported.
  const dup = list.toSpliced(3, 0, cluster(list[10].name));
  assert.throws(() => Snapshot.fromResources({ clusters: dup }, undefined, encodings), /duplicate/);
});
