/**
 * A restarted node agent re-learns what the node's Envoy holds even when the Envoy reconnects
 * before the agent's first snapshot (the adopted Envoy dials the xDS port the moment it listens,
 * the config source may still be reading): nothing it holds is removed, and a virtual host whose
 * route changed while the agent was down is pushed in its new version.
 */
import assert from "node:assert/strict";
import type { MeshIR, NodeView } from "../../lib/ir/mod.ts";
import { Snapshot } from "../xds/cache/mod.ts";
import { TypeUrl } from "../xds/proto.ts";
import type { DeltaDiscoveryResponse } from "../xds/server/mod.ts";
import { node, opts, withServer } from "../xds/server/_ads_client_test_utils.ts";
import { nodeGoldenCases } from "../xds/translate/node/_test_utils.ts";
import { NodeSnapshots } from "./snapshots.ts";

const demo = nodeGoldenCases().find((c) => c.name === "demo")!;
const S3 = "svc-3.aether.internal";
const VHOST = `outbound.b/${S3}`;
const view: NodeView = {
  nodeId: node.id,
  pods: [{ namespace: "b", name: "p", netnsPath: "/var/run/netns/p" }],
  dependencies: [],
};

/** The demo mesh with a producer route edit on svc-3 (made while the agent was down). */
function edited(mesh: MeshIR): MeshIR {
  const m = structuredClone(mesh);
  const port = m.services.find((s) => s.authority === S3)!.ports[0];
  port.producerRoutes = [{
    name: "HTTPRoute/prod/s3/rule/0/match/0",
    match: { path: { type: "PathPrefix", value: "/v2" }, headers: [], queryParams: [] },
    action: { kind: "forward", backends: [{ cluster: port.cluster, weight: 1 }], mirrors: [] },
  }];
  return m;
}

Deno.test({
  name:
    "node restart: an Envoy reconnecting before the first snapshot keeps what it holds and gets the edited vhost",
  ...opts,
  fn: async () => {
    // What the Envoy holds from the previous agent: svc-3, asked for on demand.
    const previous = new NodeSnapshots();
    previous.setMesh(demo.mesh);
    previous.setView(view);
    previous.request(node.id, [S3]);
    const held = Snapshot.fromResources(previous.resources(node.id)!);
    const versions = (t: string) =>
      Object.fromEntries([...held.resources(t).items.values()].map((r) => [r.name, r.hash]));
    assert.ok(versions(TypeUrl.virtualHost)[VHOST], "the Envoy holds svc-3's virtual host");

    let snapshots: NodeSnapshots | undefined;
    await withServer(
      async ({ cache, delta }) => {
        snapshots = new NodeSnapshots({ cache });
        // The adopted Envoy reconnects: every type with what it holds, before any snapshot.
        const d = delta();
        for (const t of [TypeUrl.cluster, TypeUrl.listener, TypeUrl.virtualHost]) {
          d.send({ node, type_url: t, initial_resource_versions: versions(t) });
        }
        for (const t of [TypeUrl.route, TypeUrl.endpoint]) {
          d.send({
            node,
            type_url: t,
            resource_names_subscribe: Object.keys(versions(t)),
            initial_resource_versions: versions(t),
          });
        }
        await d.quiet();
        // The agent's first snapshot, from the edited config.
        snapshots.setMesh(edited(demo.mesh));
        snapshots.setView(view);
        const responses: DeltaDiscoveryResponse[] = [];
        for (;;) {
          const r = await d.next(3000).catch(() => undefined);
          if (!r) break;
          responses.push(r);
          d.send({ type_url: r.type_url, response_nonce: r.nonce });
        }
        assert.deepEqual(
          responses.flatMap((r) => r.removed_resources),
          [],
          "nothing the Envoy holds is removed",
        );
        const vhosts = responses.filter((r) => r.type_url === TypeUrl.virtualHost)
          .flatMap((r) => r.resources);
        const pushed = vhosts.find((r) => r.name === VHOST);
        assert.ok(pushed, "the edited virtual host is pushed");
        assert.notEqual(pushed.version, versions(TypeUrl.virtualHost)[VHOST]);
        assert.equal(
          pushed.version,
          cache.getSnapshot(node.id)!.resources(TypeUrl.virtualHost).items.get(VHOST)!.hash,
        );
        assert.deepEqual(snapshots.dependencies(node.id), [S3], "the dependency set re-learned");
      },
      undefined,
      { onDemand: (...a) => snapshots!.onDemand(...a) },
    );
  },
});
