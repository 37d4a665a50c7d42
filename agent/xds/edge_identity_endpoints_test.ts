/**
 * With SPIRE identity (`--spire-socket`) the edge's `decorate` hook fills in endpoint identities
 * from the Pods before translation; it must keep an unchanged cluster's endpoints array, or the
 * translate memo misses and every import's ClusterLoadAssignment is made and encoded again on
 * every change. With 100 ServiceImport backends, each with a mesh pod's endpoint (an identity)
 * and some with an outside-mesh pod's: one import's endpoints changed, or one pod's identity
 * changed, encodes that import's assignment alone; a change no endpoint sees encodes none.
 */
import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import { identityDecorator, identityScheme } from "../identity/mod.ts";
import { edgeHarness, endpointsOf, importsConfig } from "./_import_endpoints_test_utils.ts";

const IMPORTS = 100;

/** A running Pod at `ip` with service account `sa` in `namespace`. */
function pod(name: string, ip: string, sa: string, namespace = "team"): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace },
    spec: { serviceAccountName: sa },
    status: { phase: "Running", podIP: ip },
  };
}

Deno.test("edge with identity: an endpoint or identity change encodes that import's ClusterLoadAssignment alone", async () => {
  const scheme = identityScheme("td.example", undefined, ["outside"]);
  const { apply: applyObjects, claEncoded, served } = edgeHarness(identityDecorator(scheme));
  const base = importsConfig(IMPORTS);
  const endpoints = Array.from({ length: IMPORTS }, (_, s) => endpointsOf(s));
  // Each import's endpoint in cluster a.eu is a mesh pod; every tenth's in b.eu is outside.
  const pods = Array.from({ length: IMPORTS }, (_, s) => pod(`p-${s}`, `10.1.0.${s}`, `sa-${s}`));
  const outside = Array.from(
    { length: IMPORTS / 10 },
    (_, k) => pod(`o-${k}`, `10.2.0.${k * 10}`, "default", "outside"),
  );
  const apply = () => applyObjects([...base, ...endpoints, ...pods, ...outside]);
  const cla = (s: number) =>
    JSON.stringify(served().items.get(`svc-${s}.team.svc.clusterset.local:80`)?.resource);

  await apply();
  assert.equal(served().items.size, IMPORTS);
  assert.equal(claEncoded(), IMPORTS);
  assert.match(cla(3), /spiffe:\/\/td\.example\/ns\/team\/sa\/sa-3/, "the endpoint's identity");
  const before = served();

  for (const [i, s] of [7, 42, 7].entries()) {
    const encoded = claEncoded();
    endpoints[s] = endpointsOf(s, `10.250.0.${i}`);
    await apply();
    assert.equal(claEncoded() - encoded, 1, `endpoint change ${i}: one assignment encoded`);
    assert.match(cla(s), new RegExp(`"10\\.250\\.0\\.${i}"`), `svc-${s} serves the new address`);
  }
  // A pod's identity changes (its service account): its import's assignment alone.
  let encoded = claEncoded();
  pods[20] = pod("p-20", "10.1.0.20", "other");
  await apply();
  assert.equal(claEncoded() - encoded, 1, "identity change: one assignment encoded");
  assert.match(cla(20), /sa\/other/, "svc-20 serves the new identity");
  // A pod no endpoint has: nothing encoded.
  encoded = claEncoded();
  pods.push(pod("idle", "10.9.9.9", "idle"));
  await apply();
  assert.equal(claEncoded() - encoded, 0, "no endpoint changed: none encoded");

  const after = served();
  for (const [name, item] of after.items) {
    if (/^svc-(7|42|20)\./.test(name)) continue;
    assert.equal(item, before.items.get(name), `${name}: the same encoded resource`);
  }
});
