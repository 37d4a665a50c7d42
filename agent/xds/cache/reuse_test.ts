import assert from "node:assert/strict";
import { TypeUrl } from "../proto.ts";
import { ResourceReuse } from "./reuse.ts";
import { type NamedResource, Snapshot } from "./snapshot.ts";

/** A RouteConfiguration long enough to be encoded in chunks (vhosts and routes above 8). */
function routes(edit: { vhost: number; route: number; prefix: string } | undefined) {
  const virtual_hosts = Array.from({ length: 12 }, (_, v) => ({
    name: `vh-${v}`,
    domains: [`h${v}.example`],
    routes: Array.from({ length: 10 }, (_, r) => ({
      name: `r-${v}-${r}`,
      match: { prefix: edit?.vhost === v && edit.route === r ? edit.prefix : `/p${r}` },
      route: { cluster: `c-${r}` },
    })),
  }));
  const name = "http.80";
  return [{ name, resource: { name, virtual_hosts } }];
}

const cluster = (name: string, seconds = 1): NamedResource => ({
  name,
  resource: { name, type: 3, connect_timeout: { seconds } },
});

const bytesOf = (s: Snapshot, typeUrl: string, name: string) =>
  s.resources(typeUrl).items.get(name)!.value;

Deno.test("reuse: equal resources become the previous objects; encodings equal fresh ones", () => {
  const reuse = new ResourceReuse();
  const first = reuse.apply({ routes: routes(undefined), clusters: [cluster("a"), cluster("b")] });
  Snapshot.fromResources(first);
  const same = reuse.apply({ routes: routes(undefined), clusters: [cluster("a"), cluster("b")] });
  assert.equal(same.routes[0].resource, first.routes[0].resource);
  assert.equal(same.clusters[1].resource, first.clusters[1].resource);

  const edit = { vhost: 5, route: 7, prefix: "/edited" };
  const next = reuse.apply({ routes: routes(edit), clusters: [cluster("a"), cluster("b", 2)] });
  assert.notEqual(next.routes[0].resource, first.routes[0].resource);
  assert.notEqual(next.clusters[1].resource, first.clusters[1].resource);
  assert.equal(next.clusters[0].resource, first.clusters[0].resource);
  const vhosts = (r: NamedResource[]) => r[0].resource.virtual_hosts as { routes: unknown[] }[];
  assert.equal(vhosts(next.routes)[4], vhosts(first.routes)[4]);
  assert.notEqual(vhosts(next.routes)[5], vhosts(first.routes)[5]);
  assert.equal(vhosts(next.routes)[5].routes[6], vhosts(first.routes)[5].routes[6]);

  const cold = Snapshot.fromResources(
    structuredClone({ routes: routes(edit), clusters: [cluster("a"), cluster("b", 2)] }),
  );
  const warm = Snapshot.fromResources(next);
  assert.equal(warm.version, cold.version);
  assert.deepEqual(
    bytesOf(warm, TypeUrl.route, "http.80"),
    bytesOf(cold, TypeUrl.route, "http.80"),
  );
});

Deno.test("reuse: a misfit inside a chunked list is reported with its field path", () => {
  const bad = routes({ vhost: 3, route: 9, prefix: 42 as unknown as string });
  assert.throws(
    () => Snapshot.fromResources({ routes: bad }),
    /RouteConfiguration: virtual_hosts\.routes\.match\.prefix: string expected/,
  );
});

Deno.test("reuse: resources are matched by position first; a shift by one is followed", () => {
  const reuse = new ResourceReuse();
  const fresh = (n: number, edit = -1) =>
    Array.from(
      { length: n },
      (_, i) => cluster(`c${String(i).padStart(4, "0")}`, i === edit ? 2 : 1),
    );
  const first = reuse.apply({ clusters: fresh(1000) });
  const s0 = reuse.stats();

  // Every resource recomputed (deep-equal, new objects) but one: all matched where they were.
  const edited = reuse.apply({ clusters: fresh(1000, 400) });
  const s1 = reuse.stats();
  assert.equal(s1.misses, s0.misses, "no resource looked up by name");
  assert.equal(s1.hits - s0.hits, 1000);
  assert.ok(edited.clusters.every((r, i) => (r === first.clusters[i]) === (i !== 400)));

  // The very same resources again: the last list itself.
  const again = reuse.apply({ clusters: [...edited.clusters] });
  assert.equal(again.clusters, edited.clusters);

  // One removed, then one added back: found one position over; only the added one missed.
  const removed = reuse.apply({ clusters: fresh(1000, 400).toSpliced(10, 1) });
  const s2 = reuse.stats();
  assert.equal(s2.misses, s1.misses);
  assert.ok(removed.clusters.every((r, i) => r === edited.clusters[i < 10 ? i : i + 1]));
  const added = reuse.apply({ clusters: fresh(1000, 400) });
  const s3 = reuse.stats();
  assert.equal(s3.misses - s2.misses, 1, "the added resource alone not found by position");
  assert.equal(reuse.indexesBuilt, 0, "every other one found by position: it is new, no index");
  assert.ok(added.clusters.every((r, i) => i === 10 || r === edited.clusters[i]));

  // Names in another order: looked up by name, still reused.
  const reversed = reuse.apply({ clusters: fresh(1000, 400).toReversed() });
  assert.ok(reversed.clusters.every((r, i) => r === added.clusters[999 - i]));
  assert.equal(reuse.indexesBuilt, 1);
});
