/**
 * serviceFingerprints with the previous mesh: an unchanged service (the same object, clusters of
 * the same field values) keeps its fingerprint object; any change is still seen, and the result
 * always equals a fingerprint computed from scratch.
 */
import assert from "node:assert/strict";
import { indexMesh, serviceFingerprints } from "./demand.ts";
import type { MeshIR, MeshService } from "../../lib/ir/mod.ts";
import type { IRCluster } from "../../lib/ir/mod.ts";

const service = (name: string): MeshService => ({
  authority: `${name}.aether.internal`,
  namespace: "mesh",
  name,
  vips: [],
  ports: [{
    port: 80,
    cluster: `${name}.aether.internal`,
    domains: [`${name}.aether.internal`],
    producerRoutes: [],
    consumerRoutes: {},
  }],
});
const cluster = (name: string, address = "10.0.0.1"): IRCluster => ({
  name: `${name}.aether.internal`,
  service: `mesh/${name}`,
  port: 80,
  protocol: "http1",
  endpoints: [{ address, port: 9000 }],
});

/** Fingerprints of `next` after `prev`, checked against a from-scratch computation. */
function after(prev: MeshIR, next: MeshIR) {
  const index = indexMesh(prev);
  const previous = { index, fingerprints: serviceFingerprints(index) };
  const got = serviceFingerprints(indexMesh(next), previous);
  assert.deepEqual(got, serviceFingerprints(indexMesh(next)), "equals a fresh computation");
  return { before: previous.fingerprints, got };
}

Deno.test("fingerprints: an unchanged service keeps its fingerprint object", () => {
  const a = service("a"), b = service("b");
  const ca = cluster("a"), cb = cluster("b");
  // A new mesh: same service objects, new cluster objects with the same fields (a resolve).
  const { before, got } = after(
    { services: [a, b], clusters: [ca, cb] },
    { services: [a, b], clusters: [{ ...ca }, { ...cb }] },
  );
  assert.equal(got.get(a.authority), before.get(a.authority));
  assert.equal(got.get(b.authority), before.get(b.authority));
});

Deno.test("fingerprints: changed endpoints, cluster fields or service are seen", () => {
  const a = service("a"), b = service("b");
  const ca = cluster("a"), cb = cluster("b");
  const prev: MeshIR = { services: [a, b], clusters: [ca, cb] };
  const eds = after(prev, { services: [a, b], clusters: [cluster("a", "10.0.0.2"), cb] });
  assert.equal(eds.got.get(a.authority)!.routing, eds.before.get(a.authority)!.routing);
  assert.notEqual(eds.got.get(a.authority)!.endpoints, eds.before.get(a.authority)!.endpoints);
  const h2 = after(prev, { services: [a, b], clusters: [{ ...ca, protocol: "http2" }, cb] });
  assert.notEqual(h2.got.get(a.authority)!.routing, h2.before.get(a.authority)!.routing);
  const routed = { ...b, ports: [{ ...b.ports[0], domains: ["other"] }] };
  const svc = after(prev, { services: [a, routed], clusters: [ca, cb] });
  assert.notEqual(svc.got.get(b.authority)!.routing, svc.before.get(b.authority)!.routing);
  assert.equal(svc.got.get(a.authority), svc.before.get(a.authority));
});
