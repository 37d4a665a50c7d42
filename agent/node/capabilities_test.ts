/**
 * The node proxy's capability negotiation: a node is translated with internal listeners only
 * when its Envoy advertised `internal_listener` (node metadata `aether.capabilities`), both in
 * NodeSnapshots and over a real ADS stream (the first response already fits the node).
 */
import assert from "node:assert/strict";
import { TypeUrl } from "../xds/proto.ts";
import { CAPABILITIES_KEY, envoyBootstrap, INTERNAL_LISTENER } from "../xds/server/mod.ts";
import { nodeCapabilities } from "../xds/server/mod.ts";
import { opts, withServer } from "../xds/server/_ads_client_test_utils.ts";
import { nodeGoldenCases } from "../xds/translate/node/_test_utils.ts";
import type { NodeResources } from "../xds/translate/node/mod.ts";
import { NodeSnapshots, type NodeSnapshotsOptions } from "./snapshots.ts";

const c = nodeGoldenCases().find((x) => x.name === "identity")!;
const NODE = c.view.nodeId;
const INTERNAL = "inbound-internal|10.0.0.2|8080.b.aether.internal";

/** The addresses of b's local endpoint (10.0.0.2) in the node's CLA of b. */
function localAddress(r: NodeResources): unknown {
  const cla = r.endpoints.find((e) => e.name === "b.aether.internal")!.resource as {
    endpoints: { lb_endpoints: { endpoint: { address: Record<string, unknown> } }[] }[];
  };
  return cla.endpoints.flatMap((g) => g.lb_endpoints.map((lb) => lb.endpoint.address));
}

/** Node metadata as protobufjs decodes a Struct, advertising `caps`. */
function metadata(caps: string[]) {
  return {
    fields: {
      [CAPABILITIES_KEY]: { listValue: { values: caps.map((s) => ({ stringValue: s })) } },
    },
  };
}

/** NodeSnapshots over `cache` with the case's mesh and view. */
function wiredSnapshots(cache: NodeSnapshotsOptions["cache"]) {
  const ns = new NodeSnapshots({ cache, translate: c.options });
  ns.setMesh(c.mesh);
  ns.setView(c.view);
  return ns;
}

/** A stream's first request: the node advertising `caps`, subscribing to listeners. */
const hello = (caps: string[]) => ({
  node: { id: NODE, cluster: "aether-node", metadata: metadata(caps) },
  type_url: TypeUrl.listener,
});

Deno.test("the bootstrap advertises internal_listener, which nodeCapabilities reads back", () => {
  const b = envoyBootstrap({ nodeId: "n", cluster: "c" }) as {
    node: { metadata: Record<string, string[]> };
    bootstrap_extensions: { name: string }[];
  };
  assert.deepEqual(b.node.metadata[CAPABILITIES_KEY], [INTERNAL_LISTENER]);
  assert.ok(b.bootstrap_extensions.some((e) => e.name === "envoy.bootstrap.internal_listener"));
  assert.deepEqual(nodeCapabilities({ id: "n", metadata: metadata(["x", INTERNAL_LISTENER]) }), [
    INTERNAL_LISTENER,
    "x",
  ]);
  assert.deepEqual(nodeCapabilities({ id: "n" }), []);
  assert.deepEqual(
    nodeCapabilities({ id: "n", metadata: { fields: { [CAPABILITIES_KEY]: {} } } }),
    [],
  );
});

Deno.test("a node without the capability gets no internal listener and :15008; with it, the internal path", () => {
  const ns = new NodeSnapshots({ translate: c.options });
  ns.setMesh(c.mesh);
  ns.setView(c.view);
  const names = () => ns.resources(NODE)!.listeners.map((l) => l.name);
  // Before any Envoy said what it can take: the conservative translation.
  assert.ok(!names().some((n) => n.startsWith("inbound-internal|")), names().join(", "));
  assert.deepEqual(localAddress(ns.resources(NODE)!), [
    { socket_address: { address: "10.0.0.2", port_value: 15008 } },
    { socket_address: { address: "10.0.1.7", port_value: 15008 } },
  ]);
  assert.equal(ns.setCapabilities(NODE, [INTERNAL_LISTENER]), true);
  assert.ok(names().includes(INTERNAL), names().join(", "));
  assert.deepEqual(localAddress(ns.resources(NODE)!), [
    { envoy_internal_address: { server_listener_name: INTERNAL } },
    { socket_address: { address: "10.0.1.7", port_value: 15008 } },
  ]);
  assert.equal(ns.setCapabilities(NODE, [INTERNAL_LISTENER]), false, "unchanged: no work");
  // An older Envoy replaces it (same node id, a bootstrap that advertises nothing).
  assert.equal(ns.setCapabilities(NODE, []), true);
  assert.ok(!names().includes(INTERNAL));
  // Endpoint changes keep to what the node can take.
  const mesh = structuredClone(c.mesh);
  mesh.clusters.find((x) => x.name === "b.aether.internal")!.endpoints.push({
    address: "10.0.1.9",
    port: 9090,
    identity: "spiffe://td.test/ns/b/sa/b",
  });
  ns.setMesh(mesh);
  assert.ok(!JSON.stringify(ns.resources(NODE)!.endpoints).includes("envoy_internal_address"));
});

Deno.test("capabilities advertised before the node has a view apply to its first translation", () => {
  const ns = new NodeSnapshots({ translate: c.options });
  ns.onNode(NODE, [INTERNAL_LISTENER]);
  ns.setMesh(c.mesh);
  ns.setView(c.view);
  assert.ok(ns.resources(NODE)!.listeners.some((l) => l.name === INTERNAL));
});

Deno.test({
  name: "ADS: the first listener push fits what the stream's node advertised",
  ...opts,
  fn: async () => {
    for (const caps of [[], [INTERNAL_LISTENER]]) {
      // The server makes its cache; the node snapshots feeding it are made inside.
      let wired: NodeSnapshots | undefined;
      await withServer(
        async ({ cache, server, delta }) => {
          wired = wiredSnapshots(cache);
          const s = delta();
          s.send(hello(caps));
          const r = await s.next(10_000);
          const names = r.resources.map((x) => x.name);
          assert.equal(names.includes(INTERNAL), caps.length > 0, names.join(", "));
          assert.ok(names.includes("inbound|b/b-0"), names.join(", "));
          assert.deepEqual(server.status().find((x) => x.nodeId === NODE)?.capabilities, caps);
          assert.deepEqual(wired.capabilities(NODE), caps);
        },
        undefined,
        { onNode: (id, got) => wired?.onNode(id, got) },
      );
    }
  },
});

Deno.test({
  name:
    "ADS: two streams of one node get what both can take; the newer gets all once the older ends",
  ...opts,
  fn: async () => {
    let wired: NodeSnapshots | undefined;
    await withServer(
      async ({ cache, server, delta }) => {
        wired = wiredSnapshots(cache);
        const open = async (caps: string[]) => {
          const s = delta();
          s.send(hello(caps));
          const r = await s.next(10_000);
          s.send({ type_url: TypeUrl.listener, response_nonce: r.nonce }); // ACK
          return { s, names: r.resources.map((x) => x.name) };
        };
        const older = await open([]);
        assert.ok(!older.names.includes(INTERNAL), older.names.join(", "));
        const newer = await open([INTERNAL_LISTENER]);
        assert.ok(!newer.names.includes(INTERNAL), "translated for the shared capabilities");
        assert.deepEqual(wired.capabilities(NODE), []);
        const st = server.status().find((x) => x.nodeId === NODE);
        assert.deepEqual([st?.streams, st?.nodeCapabilities, st?.capabilities], [2, [], [
          INTERNAL_LISTENER,
        ]]);
        older.s.end();
        const pushed = (await newer.s.next(10_000)).resources.map((x) => x.name);
        assert.ok(pushed.includes(INTERNAL), pushed.join(", "));
        assert.deepEqual(wired.capabilities(NODE), [INTERNAL_LISTENER]);
      },
      undefined,
      { onNode: (id, got) => wired?.onNode(id, got) },
    );
  },
});
