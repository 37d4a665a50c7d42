import assert from "node:assert/strict";
import { ROUTE_KINDS } from "../gatewayapi/mod.ts";
import {
  collectionPath,
  crdName,
  defaultKinds,
  kindSpec,
  kindSpecs,
  samePod,
  servedVersion,
  trimObject,
} from "./kinds.ts";

Deno.test("kind specs: the catalogue gives each read kind's group, versions, plural and scope", () => {
  const gw = (kind: string, plural: string, versions: string[], namespaced = true) => ({
    kind,
    group: "gateway.networking.k8s.io",
    versions,
    plural,
    namespaced,
    crd: true,
  });
  const core = (kind: string, group: string, plural: string, namespaced = true) => ({
    kind,
    group,
    versions: ["v1"],
    plural,
    namespaced,
    crd: false,
  });
  // What the hand-written table said before the catalogue: the same specs, in the same order.
  assert.deepEqual(kindSpecs([...defaultKinds(ROUTE_KINDS), "Pod"]), [
    gw("GatewayClass", "gatewayclasses", ["v1"], false),
    gw("Gateway", "gateways", ["v1"]),
    gw("HTTPRoute", "httproutes", ["v1"]),
    gw("GRPCRoute", "grpcroutes", ["v1"]),
    gw("TLSRoute", "tlsroutes", ["v1", "v1alpha3", "v1alpha2"]),
    gw("TCPRoute", "tcproutes", ["v1alpha2"]),
    gw("UDPRoute", "udproutes", ["v1alpha2"]),
    gw("ReferenceGrant", "referencegrants", ["v1beta1", "v1"]),
    core("Namespace", "", "namespaces", false),
    core("Service", "", "services"),
    core("EndpointSlice", "discovery.k8s.io", "endpointslices"),
    core("Secret", "", "secrets"),
    core("Pod", "", "pods"),
  ]);
  assert.throws(() => kindSpec("ConfigMap"), /unknown kind ConfigMap/);
});

Deno.test("kind specs: the first watch version the CRD serves is read", () => {
  const grant = kindSpec("ReferenceGrant");
  assert.equal(crdName(grant), "referencegrants.gateway.networking.k8s.io");
  const crd = (served: string[]) => ({ name: crdName(grant), established: true, served });
  assert.equal(servedVersion(grant, crd(["v1", "v1beta1"])), "v1beta1");
  assert.equal(servedVersion(grant, crd(["v1"])), "v1");
  assert.equal(servedVersion(grant, { ...crd(["v1"]), established: false }), undefined);
  assert.equal(
    collectionPath(kindSpec("TLSRoute"), servedVersion(kindSpec("TLSRoute"), crd(["v1alpha2"]))!),
    "/apis/gateway.networking.k8s.io/v1alpha2/tlsroutes",
  );
  assert.equal(
    collectionPath(kindSpec("EndpointSlice"), "v1"),
    "/apis/discovery.k8s.io/v1/endpointslices",
  );
  assert.equal(
    collectionPath(kindSpec("EndpointSlice"), "v1", "aether-system"),
    "/apis/discovery.k8s.io/v1/namespaces/aether-system/endpointslices",
  );
  assert.equal(collectionPath(kindSpec("Namespace"), "v1", "x"), "/api/v1/namespaces");
});

Deno.test("trimObject: a Pod keeps who it is, where it runs, its service account and address", () => {
  const pod = trimObject(
    {
      metadata: {
        name: "p",
        namespace: "a",
        uid: "u",
        managedFields: [{}],
        annotations: { x: "y" },
      },
      spec: {
        nodeName: "n1",
        serviceAccountName: "sa",
        hostNetwork: false,
        containers: [{ name: "c", image: "i" }],
      },
      status: { phase: "Running", podIP: "10.0.0.1", podIPs: [{ ip: "10.0.0.1" }], conditions: [] },
    },
    "Pod",
    "v1",
  );
  assert.deepEqual(pod, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p", namespace: "a", uid: "u", annotations: { x: "y" } },
    spec: { nodeName: "n1", serviceAccountName: "sa", hostNetwork: false },
    status: { phase: "Running", podIP: "10.0.0.1", podIPs: [{ ip: "10.0.0.1" }] },
  });
});

Deno.test("samePod: an update of what is not kept (conditions, resourceVersion) is the same Pod", () => {
  const raw = (rv: string, ready: string, ip?: string) => ({
    metadata: { name: "p", namespace: "a", uid: "u", resourceVersion: rv },
    spec: { nodeName: "n1", serviceAccountName: "sa" },
    status: {
      phase: "Running",
      ...ip ? { podIP: ip } : {},
      conditions: [{ type: "Ready", status: ready }],
    },
  });
  const trim = (o: unknown) => trimObject(o, "Pod", "v1");
  const first = trim(raw("1", "False", "10.0.0.1"));
  assert.equal(first.metadata.resourceVersion, undefined, "a trimmed Pod has no resourceVersion");
  assert.ok(
    samePod(first, trim(raw("2", "True", "10.0.0.1"))),
    "Ready flipped: nothing kept changed",
  );
  assert.ok(!samePod(first, trim(raw("3", "True", "10.0.0.2"))), "a new address is a change");
  assert.ok(!samePod(first, trim(raw("4", "True"))), "an address gone is a change");
});
