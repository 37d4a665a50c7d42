/**
 * VHDS on the delta stream, as Envoy 1.40 speaks it: an empty first request is a wildcard; an
 * on-demand alias `<rc>/<host>` is answered with the vhost serving it (listed in `aliases`) after
 * the endpoints it needs are ACKed, or with an empty resource named by the alias.
 */
import assert from "node:assert/strict";
import { Snapshot, type SnapshotCache } from "../cache/mod.ts";
import { TypeUrl } from "../proto.ts";
import { node, opts, withServer } from "./_ads_client_test_utils.ts";
import type { DeltaResource } from "./service.ts";
import { edsCluster, endpoints } from "./_test_utils.ts";
import { vhdsSelect } from "./vhds.ts";

function vhost(rc: string, cluster: string): { name: string; resource: Record<string, unknown> } {
  const name = `${rc}/${cluster}`;
  return {
    name,
    resource: {
      name,
      domains: [cluster, `${cluster}:80`],
      routes: [{ match: { prefix: "/" }, route: { cluster } }],
    },
  };
}

const ads = { ads: {}, resource_api_version: 2 };
const rc = (name: string) => ({ name, resource: { name, vhds: { config_source: ads } } });

function snap(clusters: string[]): Snapshot {
  return Snapshot.fromResources({
    routes: [rc("rc"), rc("rc2")],
    clusters: clusters.map((c) => edsCluster(c)),
    endpoints: clusters.map((c) => endpoints(c, [9000])),
    virtualHosts: clusters.map((c) => vhost("rc", c)),
  });
}

const names = (rs: DeltaResource[]) => rs.map((r) => [r.name, r.aliases ?? [], !!r.resource]);

Deno.test("vhdsSelect: namespaces, exact names and aliases", () => {
  const items = snap(["a", "b"]).resources(TypeUrl.virtualHost).items;
  const sel = vhdsSelect(items, new Set(["rc/A:80", "rc/nope", "rc/b"]));
  assert.deepEqual(sel.selected.map((r) => r.name), ["rc/a", "rc/b"]);
  assert.deepEqual([...sel.answers], [["rc/a", ["rc/A:80"]], ["rc/b", ["rc/b"]]]);
  assert.deepEqual(sel.unresolved, ["rc/nope"]);
  assert.equal(vhdsSelect(items, new Set(["rc"])).selected.length, 2, "a namespace");
  assert.equal(vhdsSelect(items, new Set(["other"])).selected.length, 0);
});

Deno.test({
  name:
    "VHDS: wildcard after RDS, alias after its endpoints are ACKed, unknown host answered empty",
  ...opts,
  fn: async () => {
    const asked: string[][] = [];
    let cache: SnapshotCache | undefined;
    const onDemand = (_n: string, typeUrl: string, req: string[]) => {
      asked.push([typeUrl, ...req]);
      if (req.includes("rc/b:80")) cache!.setSnapshot("n1", snap(["a", "b"]));
    };
    await withServer(
      async (ctx) => {
        cache = ctx.cache;
        cache.setSnapshot("n1", snap(["a"]));
        const d = ctx.delta();
        d.send({ node, type_url: TypeUrl.cluster });
        const c1 = await d.next();
        d.send({ type_url: TypeUrl.cluster, response_nonce: c1.nonce });
        d.send({ type_url: TypeUrl.endpoint, resource_names_subscribe: ["a"] });
        const e1 = await d.next();
        d.send({ type_url: TypeUrl.endpoint, response_nonce: e1.nonce });
        // Envoy opens VHDS without names while it applies RDS: the vhosts of each route config
        // come once RDS is ACKed (its VHDS watch exists then); one without vhosts gets a no-op
        // removal, which completes its VHDS init.
        d.send({ type_url: TypeUrl.route, resource_names_subscribe: ["rc", "rc2"] });
        const r1 = await d.next();
        d.send({ type_url: TypeUrl.virtualHost });
        await d.quiet();
        d.send({ type_url: TypeUrl.route, response_nonce: r1.nonce });
        const v1 = await d.next();
        assert.deepEqual(names(v1.resources), [["rc/a", [], true]]);
        assert.deepEqual(v1.removed_resources, ["rc2/"]);
        d.send({ type_url: TypeUrl.virtualHost, response_nonce: v1.nonce });
        await d.quiet();
        assert.deepEqual(asked, []);

        // A paused request for host b:80: CDS first, and the vhost only once b's endpoints ACK.
        d.send({ type_url: TypeUrl.virtualHost, resource_names_subscribe: ["rc/b:80"] });
        const c2 = await d.next();
        assert.equal(c2.type_url, TypeUrl.cluster);
        assert.deepEqual(asked, [[TypeUrl.virtualHost, "rc/b:80"]]);
        d.send({ type_url: TypeUrl.cluster, response_nonce: c2.nonce });
        await d.quiet();
        d.send({ type_url: TypeUrl.endpoint, resource_names_subscribe: ["b"] });
        const e2 = await d.next();
        assert.equal(e2.type_url, TypeUrl.endpoint);
        await d.quiet();
        d.send({ type_url: TypeUrl.endpoint, response_nonce: e2.nonce });
        const v2 = await d.next();
        assert.equal(v2.type_url, TypeUrl.virtualHost);
        assert.deepEqual(names(v2.resources), [["rc/b", ["rc/b:80"], true]]);
        d.send({ type_url: TypeUrl.virtualHost, response_nonce: v2.nonce });
        await d.quiet();

        // An unknown host: an empty resource named by the alias, at once, and again if re-asked.
        for (let i = 0; i < 2; i++) {
          d.send({ type_url: TypeUrl.virtualHost, resource_names_subscribe: ["rc/nope"] });
          const v3 = await d.next();
          assert.deepEqual(names(v3.resources), [["rc/nope", ["rc/nope"], false]]);
          d.send({ type_url: TypeUrl.virtualHost, response_nonce: v3.nonce });
          await d.quiet();
        }
        // A host the client already has, asked again: its vhost is sent again with the alias.
        d.send({ type_url: TypeUrl.virtualHost, resource_names_subscribe: ["rc/a"] });
        const v4 = await d.next();
        assert.deepEqual(names(v4.resources), [["rc/a", [], true]]);
      },
      undefined,
      { onDemand },
    );
  },
});
