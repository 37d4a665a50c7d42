import assert from "node:assert/strict";
import { TypeUrl } from "../proto.ts";
import { Encodings, type NamedResource, pushOrder, Snapshot, SnapshotCache } from "./mod.ts";

function cluster(name: string, timeout = 1): NamedResource {
  return { name, resource: { name, type: 3, connect_timeout: { seconds: timeout } } };
}

function cla(name: string, port: number): NamedResource {
  return {
    name,
    resource: {
      cluster_name: name,
      endpoints: [{
        lb_endpoints: [{
          endpoint: { address: { socket_address: { address: "127.0.0.1", port_value: port } } },
        }],
      }],
    },
  };
}

Deno.test("snapshot: same content gives the same versions, whatever the order", () => {
  const a = Snapshot.fromResources({ clusters: [cluster("a"), cluster("b")] });
  const b = Snapshot.fromResources({ clusters: [cluster("b"), cluster("a")] });
  assert.equal(a.version, b.version);
  assert.equal(a.typeVersion(TypeUrl.cluster), b.typeVersion(TypeUrl.cluster));
  assert.equal(a.typeVersion(TypeUrl.listener), "empty");
  const c = Snapshot.fromResources({ clusters: [cluster("a"), cluster("b", 2)] });
  assert.notEqual(c.typeVersion(TypeUrl.cluster), a.typeVersion(TypeUrl.cluster));
  const items = c.resources(TypeUrl.cluster).items;
  assert.equal(items.get("a")!.hash, a.resources(TypeUrl.cluster).items.get("a")!.hash);
  assert.notEqual(items.get("b")!.hash, a.resources(TypeUrl.cluster).items.get("b")!.hash);
  const summary = c.summary()[TypeUrl.cluster];
  assert.deepEqual(summary.resources.map((r) => r.name), ["a", "b"]);
  assert.equal(summary.version, c.typeVersion(TypeUrl.cluster));
  assert.deepEqual(pushOrder.slice(0, 3), [TypeUrl.secret, TypeUrl.cluster, TypeUrl.endpoint]);
});

Deno.test("snapshot: bad resources fail naming the resource; duplicates are rejected", () => {
  assert.throws(
    () => Snapshot.fromResources({ clusters: [{ name: "x", resource: { type: "bogus" } }] }),
    /resource "x".*Cluster/,
  );
  assert.throws(
    () => Snapshot.fromResources({ clusters: [cluster("a"), cluster("a")] }),
    /duplicate .*Cluster resource "a"/,
  );
  // With onInvalid, the bad resource is reported and the rest is kept.
  const bad: string[] = [];
  const s = Snapshot.fromResources(
    { clusters: [cluster("ok"), { name: "x", resource: { type: "bogus" } }, cluster("ok")] },
    (_type, name) => bad.push(name),
  );
  assert.deepEqual(bad, ["x", "ok"]);
  assert.deepEqual([...s.resources(TypeUrl.cluster).items.keys()], ["ok"]);
});

Deno.test("snapshot: withEndpoints re-encodes only EDS", () => {
  const s1 = Snapshot.fromResources({ clusters: [cluster("a")], endpoints: [cla("a", 1)] });
  const s2 = s1.withEndpoints([cla("a", 2)]);
  assert.equal(s2.resources(TypeUrl.cluster), s1.resources(TypeUrl.cluster));
  assert.notEqual(s2.typeVersion(TypeUrl.endpoint), s1.typeVersion(TypeUrl.endpoint));
  assert.notEqual(s2.version, s1.version);
  assert.equal(s1.withEndpoints([cla("a", 1)]).version, s1.version);
  // The same resource object is encoded once.
  const obj = cla("b", 1);
  const e1 = s1.withEndpoints([obj]).resources(TypeUrl.endpoint).items.get("b");
  assert.equal(s2.withEndpoints([obj]).resources(TypeUrl.endpoint).items.get("b"), e1);
});

Deno.test("cache: per-node snapshots, default fallback, change-only notifications", () => {
  const cache = new SnapshotCache();
  const seen: string[] = [];
  const stop = cache.subscribe("n1", (s) => seen.push(s.version));
  assert.equal(cache.getSnapshot("n1"), undefined);
  const d = Snapshot.fromResources({ clusters: [cluster("d")] });
  assert.equal(cache.setDefaultSnapshot(d), true);
  assert.equal(cache.getSnapshot("n1"), d);
  assert.equal(cache.getSnapshot("other"), d);
  // Same content again: nobody is told.
  assert.equal(
    cache.setDefaultSnapshot(Snapshot.fromResources({ clusters: [cluster("d")] })),
    false,
  );
  const own = Snapshot.fromResources({ clusters: [cluster("own")] });
  assert.equal(cache.setSnapshot("n1", own), true);
  assert.equal(cache.setSnapshot("n1", own), false);
  // n1 has its own snapshot, so a default change does not reach it.
  cache.setDefaultSnapshot(Snapshot.fromResources({}));
  assert.deepEqual(seen, [d.version, own.version]);
  cache.clearSnapshot("n1");
  assert.equal(seen.length, 3);
  assert.deepEqual(cache.nodeIds(), []);
  stop();
  cache.setDefaultSnapshot(d);
  assert.equal(seen.length, 3);
});

Deno.test("cache: setEndpoints is the endpoint fast path, for a node and for the default", () => {
  const cache = new SnapshotCache();
  const base = Snapshot.fromResources({ clusters: [cluster("a")], endpoints: [cla("a", 1)] });
  cache.setDefaultSnapshot(base);
  cache.setSnapshot("n1", base);
  assert.equal(cache.setEndpoints(undefined, [cla("a", 2)]), true);
  assert.equal(cache.setEndpoints(undefined, [cla("a", 2)]), false);
  assert.equal(cache.getSnapshot("n1"), base);
  assert.equal(cache.setEndpoints("n1", [cla("a", 3)]), true);
  const n1 = cache.getSnapshot("n1")!;
  assert.equal(n1.resources(TypeUrl.cluster), base.resources(TypeUrl.cluster));
  assert.equal(n1.resources(TypeUrl.endpoint).items.size, 1);
});

Deno.test("cache: a listener that sets a newer snapshot is not overtaken for later listeners", () => {
  const cache = new SnapshotCache();
  const s1 = Snapshot.fromResources({ clusters: [cluster("a")] });
  const s2 = Snapshot.fromResources({ clusters: [cluster("a"), cluster("b")] });
  const seen: string[] = [];
  cache.subscribe("n", (s) => {
    if (s === s1) cache.setSnapshot("n", s2); // e.g. a synchronous on-demand handler
  });
  cache.subscribe("n", (s) => seen.push(s === s1 ? "s1" : "s2"));
  cache.setSnapshot("n", s1);
  assert.equal(seen.at(-1), "s2", "the last snapshot a listener sees is the current one");
  assert.equal(cache.getSnapshot("n"), s2);
});

Deno.test("snapshot: a type whose encoded resources are all the same keeps its TypeResources", () => {
  const encodings = new Encodings();
  const [a, b] = [cluster("a"), cluster("b")];
  const first = Snapshot.fromResources(
    { clusters: [a, b], endpoints: [cla("a", 1)] },
    undefined,
    encodings,
  );
  const second = first.withTypes({ clusters: [a, b], endpoints: [cla("a", 2)] });
  assert.equal(second.resources(TypeUrl.cluster), first.resources(TypeUrl.cluster));
  assert.notEqual(second.typeVersion(TypeUrl.endpoint), first.typeVersion(TypeUrl.endpoint));
  const fewer = second.withTypes({ clusters: [a] });
  assert.notEqual(fewer.typeVersion(TypeUrl.cluster), first.typeVersion(TypeUrl.cluster));
  assert.equal(
    fewer.typeVersion(TypeUrl.cluster),
    Snapshot.fromResources({ clusters: [a] }).typeVersion(TypeUrl.cluster),
  );
  const back = fewer.withTypes({ clusters: [a, b] });
  assert.equal(back.typeVersion(TypeUrl.cluster), first.typeVersion(TypeUrl.cluster));
});
