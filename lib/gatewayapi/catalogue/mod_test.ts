import assert from "node:assert/strict";
import { CATALOGUE_OUTPUT, generateCatalogue, renderCatalogue } from "../../../tools/gen_crds.ts";
import { FACTS } from "../admission/mod.ts";
import { ROUTE_KINDS } from "../routes/registry.ts";
import {
  admittedKinds,
  CATALOGUE,
  catalogueKind,
  CRD_KINDS,
  gatewayReadKinds,
  MCS_KINDS,
  MESH_KINDS,
  NODE_LOCAL_KINDS,
  readKinds,
  watchVersions,
} from "./mod.ts";

Deno.test("catalogue: regenerating from the vendored YAML gives the checked-in module", async () => {
  const kinds = await generateCatalogue();
  const text = renderCatalogue(kinds);
  assert.equal(text, await Deno.readTextFile(CATALOGUE_OUTPUT), "run deno task gen-crds");
  assert.deepEqual(kinds, CRD_KINDS);
  assert.equal(renderCatalogue(await generateCatalogue()), text, "generation is deterministic");
});

Deno.test("catalogue: each CRD kind's group, scope and versions are its facts'", () => {
  assert.deepEqual(CRD_KINDS.map((k) => k.kind), Object.keys(FACTS.kinds));
  for (const k of CRD_KINDS) {
    const facts = FACTS.kinds[k.kind];
    assert.equal(k.group, facts.group, k.kind);
    assert.equal(k.namespaced, facts.namespaced, k.kind);
    assert.deepEqual(k.versions, Object.keys(facts.versions), k.kind);
    assert.ok(k.versions.includes(k.storage), k.kind);
  }
  // The CRD's order is kept, and differs from the storage-first one where v1.5.1 says so.
  assert.deepEqual(catalogueKind("ReferenceGrant").versions, ["v1", "v1beta1"]);
  assert.equal(catalogueKind("ReferenceGrant").storage, "v1beta1");
  assert.deepEqual(catalogueKind("TLSRoute").versions, ["v1", "v1alpha2", "v1alpha3"]);
  assert.deepEqual(catalogueKind("Service"), {
    kind: "Service",
    group: "",
    versions: ["v1"],
    storage: "v1",
    plural: "services",
    namespaced: true,
  });
  assert.throws(() => catalogueKind("ConfigMap"), /unknown kind ConfigMap: the catalogue holds/);
});

Deno.test("catalogue: aether reads the registry's route kinds between Gateways and grants", () => {
  assert.deepEqual(gatewayReadKinds(ROUTE_KINDS), [
    "GatewayClass",
    "Gateway",
    "HTTPRoute",
    "GRPCRoute",
    "TLSRoute",
    "TCPRoute",
    "UDPRoute",
    "ReferenceGrant",
  ]);
  const read = readKinds(ROUTE_KINDS);
  assert.deepEqual(read.slice(8), ["Namespace", "Service", "EndpointSlice", "Secret", "Pod"]);
  // Every read kind is in the catalogue; BackendTLSPolicy, ListenerSet, … are not read.
  for (const k of read) catalogueKind(k);
  assert.deepEqual(
    CATALOGUE.map((k) => k.kind).filter((k) => !read.includes(k)),
    [
      "BackendTLSPolicy",
      "ListenerSet",
      "XBackendTrafficPolicy",
      "XMesh",
      "ServiceImport",
      "PodNetwork",
      "ClusterSetEndpoints",
    ],
  );
  // XMesh (the controller reads it, kube/kinds.ts controllerKinds), ServiceImport (agents of a
  // clusterset read it) and the node-local kinds (never read from the API server) are admitted.
  assert.deepEqual(MESH_KINDS, ["XMesh"]);
  assert.deepEqual(MCS_KINDS, ["ServiceImport"]);
  assert.deepEqual(admittedKinds(ROUTE_KINDS), [
    ...read,
    ...MESH_KINDS,
    ...MCS_KINDS,
    ...NODE_LOCAL_KINDS.map((k) => k.kind),
  ]);
  assert.deepEqual(NODE_LOCAL_KINDS.map((k) => k.kind), ["PodNetwork", "ClusterSetEndpoints"]);
});

Deno.test("catalogue: watch versions are served ones, the storage version first", () => {
  for (const k of CATALOGUE) {
    const versions = watchVersions(k);
    assert.equal(versions[0], k.storage, k.kind);
    for (const v of versions) assert.ok(k.versions.includes(v), `${k.kind} ${v}`);
  }
  assert.deepEqual(watchVersions(catalogueKind("TLSRoute")), ["v1", "v1alpha3", "v1alpha2"]);
  assert.deepEqual(watchVersions(catalogueKind("ReferenceGrant")), ["v1beta1", "v1"]);
  assert.deepEqual(watchVersions(catalogueKind("HTTPRoute")), ["v1"]);
});
