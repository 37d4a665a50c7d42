/**
 * On-demand CDS for a ServiceImport's cluster (`<name>.<ns>.svc.clusterset.local:<port>`), which
 * no mesh service owns: the request names the service whose routes send to it, so the node's set
 * (and the caller's) grows by that service and its route's backends — the import cluster among
 * them — instead of by a name no service has (Envoy then waited out its 5 s on-demand timeout).
 */
import assert from "node:assert/strict";
import { indexMesh, requestedAuthority, scopedView } from "./demand.ts";
import type { IRCluster, MeshIR, MeshService } from "../../lib/ir/mod.ts";
import { nodeClusterNames } from "../xds/translate/node/mod.ts";

const IMPORT = "web.shop.svc.clusterset.local:8080";
const front: MeshService = {
  authority: "front.aether.internal",
  namespace: "shop",
  name: "front",
  vips: [],
  ports: [{
    port: 8080,
    cluster: "front.aether.internal",
    domains: ["front.aether.internal"],
    producerRoutes: [{
      name: "HTTPRoute/shop/front/rule/0/match/0",
      match: { path: { type: "PathPrefix", value: "/" }, headers: [], queryParams: [] },
      action: { kind: "forward", backends: [{ cluster: IMPORT, weight: 1 }], mirrors: [] },
    }],
    consumerRoutes: {},
  }],
};
const cluster = (name: string, service: string): IRCluster => ({
  name,
  service,
  port: 8080,
  protocol: "http1",
  endpoints: [{ address: "10.0.0.9", port: 9090, identity: "spiffe://td/ns/shop/sa/web" }],
});
const mesh: MeshIR = {
  services: [front],
  clusters: [cluster("front.aether.internal", "shop/front"), cluster(IMPORT, "shop/web")],
};

Deno.test("demand: an import cluster asked for on demand names the service routing to it", () => {
  const index = indexMesh(mesh);
  assert.equal(requestedAuthority(index, IMPORT), "front.aether.internal");
  assert.equal(requestedAuthority(index, "front.aether.internal"), "front.aether.internal");
  assert.equal(requestedAuthority(index, "gone.aether.internal:80"), "gone.aether.internal");
});

Deno.test("demand: a caller that asked for an import cluster gets it", () => {
  const index = indexMesh(mesh);
  const pod = { namespace: "shop", name: "caller", netnsPath: "/x", serviceAccount: "caller" };
  const view = scopedView(index, {
    view: { nodeId: "n", pods: [pod], dependencies: [] },
    requested: [IMPORT],
    requestedBy: { "shop/caller": [IMPORT] },
  });
  assert.deepEqual(view.dependencies, ["front.aether.internal"]);
  const mine = view.callerDependencies!["shop/caller"];
  assert.deepEqual(mine, ["front.aether.internal"]);
  const names = nodeClusterNames(mesh.services, ["shop"], index.clusters);
  assert.ok(names.has(IMPORT));
});
