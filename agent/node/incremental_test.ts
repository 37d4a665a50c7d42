import assert from "node:assert/strict";
import { resolve } from "../../lib/gatewayapi/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { NodeView } from "../../lib/ir/mod.ts";
import { lcg } from "../../testbed/fixtures/lcg.ts";
import { type Edit, serviceObjects } from "../../testbed/fixtures/mesh_config.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { NodeSnapshots, nodeSnapshots } from "./snapshots.ts";
import { nodeGoldenCases } from "../xds/translate/node/_test_utils.ts";
import { translateNode } from "../xds/translate/node/mod.ts";
import { INTERNAL_LISTENER } from "../xds/server/mod.ts";

const SERVICES = 30;
const domain = "aether.internal";

/** The fixture mesh with `edits` applied; svc-29's first route also sends to svc-`to`. */
function meshOf(edits: Edit[], to?: number) {
  const objects: KubeObject[] = [];
  for (let i = 0; i < SERVICES; i++) {
    const edit = edits.find((e) => e.route === i || e.endpoint === i) ?? {};
    const objs = serviceObjects(i, edit);
    if (i === SERVICES - 1 && to !== undefined) {
      const route = structuredClone(objs[2]);
      (route.spec as { rules: { backendRefs: unknown[] }[] }).rules[0].backendRefs.push({
        name: `svc-${to}`,
        port: 8080,
      });
      objs[2] = route;
    }
    objects.push(...objs);
  }
  return resolve(objects, { meshDomain: domain }).mesh;
}

Deno.test("incremental node translation equals a full translation after every change", () => {
  const rnd = lcg(99);
  const views: NodeView[] = Array.from({ length: 8 }, (_, n) => {
    const deps = new Set<string>();
    while (deps.size < 5) deps.add(`svc-${Math.floor(rnd() * SERVICES)}.${domain}`);
    return {
      nodeId: `n${n}`,
      pods: [{ namespace: `ns-${n % 3}`, name: `p${n}`, netnsPath: "" }],
      dependencies: [...deps].sort(),
    };
  });
  const cache = new SnapshotCache();
  const ns = new NodeSnapshots({ cache });
  ns.setMesh(meshOf([]));
  for (const v of views) ns.setView(v);
  let incremental = 0;
  for (let step = 1; step <= 40; step++) {
    const svc = Math.floor(rnd() * SERVICES);
    const kind = rnd();
    const edits: Edit[] = kind < 0.4
      ? [{ route: svc, routeVersion: step }]
      : kind < 0.8
      ? [{ endpoint: svc, endpointVersion: step }]
      : [{ route: svc, routeVersion: step }, {
        endpoint: (svc + 1) % SERVICES,
        endpointVersion: step,
      }];
    // Every 7th step svc-29 gains a backend outside some sets: their closure grows.
    const mesh = meshOf(edits, step % 7 === 0 ? Math.floor(rnd() * SERVICES) : undefined);
    const before = new Map(views.map((v) => [v.nodeId, ns.resources(v.nodeId)!]));
    ns.setMesh(mesh);
    const full = nodeSnapshots(mesh, views.map((view) => ({ view })));
    for (const v of views) {
      const got = ns.resources(v.nodeId)!;
      assert.deepEqual(got, full.get(v.nodeId), `step ${step}, ${v.nodeId}`);
      // Unchanged resources are the same objects as before (so encoding skips them).
      const old = before.get(v.nodeId)!;
      const reused = got.clusters.filter((c) => old.clusters.includes(c)).length;
      if (reused > 0 && reused < got.clusters.length) incremental++;
    }
  }
  assert.ok(incremental > 0, "some nodes were re-translated in part");
});

Deno.test("an endpoint change gives every node holding the cluster the same CLA object", () => {
  const ns = new NodeSnapshots({ cache: new SnapshotCache() });
  ns.setMesh(meshOf([]));
  const deps = [`svc-1.${domain}`, `svc-2.${domain}`];
  for (const n of ["a", "b"]) {
    ns.setView({
      nodeId: n,
      pods: [{ namespace: `ns-${n}`, name: "p", netnsPath: "" }],
      dependencies: deps,
    });
  }
  const before = ns.resources("a")!;
  assert.deepEqual(ns.setMesh(meshOf([{ endpoint: 1, endpointVersion: 7 }])), ["a", "b"]);
  const cla = (n: string) => ns.resources(n)!.endpoints.find((e) => e.name === `svc-1.${domain}`);
  assert.ok(cla("a"));
  assert.equal(cla("a"), cla("b"), "one object, encoded once");
  assert.notDeepEqual(cla("a"), before.endpoints.find((e) => e.name === `svc-1.${domain}`));
  // The untouched service keeps its very object.
  const other = (r: typeof before) => r.endpoints.find((e) => e.name === `svc-2.${domain}`);
  assert.equal(other(ns.resources("a")!), other(before));
});

Deno.test("same-node mTLS endpoints stay on the internal listener through incremental changes", () => {
  const c = nodeGoldenCases().find((x) => x.name === "identity")!;
  const internal = "inbound-internal|10.0.0.2|8080.b.aether.internal";
  const ns = new NodeSnapshots({ cache: new SnapshotCache(), translate: c.options });
  ns.setCapabilities(c.view.nodeId, [INTERNAL_LISTENER]);
  ns.setMesh(c.mesh);
  ns.setView(c.view);
  const addressesOf = (nodeId: string) =>
    JSON.stringify(ns.resources(nodeId)!.endpoints.find((e) => e.name === "b.aether.internal"));
  assert.ok(addressesOf(c.view.nodeId).includes(internal), "the full translation localizes");
  // An endpoint-only change (the endpoint fast path): b gains a remote endpoint.
  const mesh = structuredClone(c.mesh);
  const b = mesh.clusters.find((x) => x.name === "b.aether.internal")!;
  b.endpoints.push({ address: "10.0.1.9", port: 9090, identity: b.identities![0] });
  ns.setMesh(mesh);
  const got = ns.resources(c.view.nodeId)!;
  assert.deepEqual(got.endpoints, translateNode(mesh, c.view, c.options).endpoints);
  assert.ok(addressesOf(c.view.nodeId).includes(internal), "still localized");
  assert.ok(addressesOf(c.view.nodeId).includes("10.0.1.9"), "the new endpoint is there");
});
