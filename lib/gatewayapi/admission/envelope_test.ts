/**
 * A kind whose body schema cannot see the envelope (open, no rule or property of it) is walked
 * whole, without a body copied out and back: the admitted object is the one the body walk gives
 * (same keys in the same order, envelope untouched, defaults in, namespace defaulted).
 */
import assert from "node:assert/strict";
import { admit } from "./admit.ts";
import { ADMISSION_KINDS } from "../read_kinds.ts";
import type { KubeObject, Problem } from "../types.ts";

Deno.test("admission: Service and EndpointSlice are walked whole, Gateway API kinds by body", () => {
  assert.equal(ADMISSION_KINDS.Service.envelopeBlind, true);
  assert.equal(ADMISSION_KINDS.EndpointSlice.envelopeBlind, true);
  assert.equal(ADMISSION_KINDS.HTTPRoute.envelopeBlind, undefined);
  assert.equal(ADMISSION_KINDS.Gateway.envelopeBlind, undefined);
});

Deno.test("admission walked whole: defaults, kept envelope and status, key order, namespace", () => {
  const status = { loadBalancer: {} };
  const service: KubeObject = {
    kind: "Service",
    apiVersion: "v1",
    metadata: { name: "web" },
    spec: { ports: [{ name: "http", port: 80 }], clusterIP: "10.0.0.1" },
    status,
  } as KubeObject;
  const problems: Problem[] = [];
  const [out] = admit([service], problems, ADMISSION_KINDS);
  assert.deepEqual(problems, []);
  assert.deepEqual(Object.keys(out), ["kind", "apiVersion", "metadata", "spec", "status"]);
  assert.deepEqual(out.metadata, { name: "web", namespace: "default" });
  assert.deepEqual(out.spec, {
    ports: [{ name: "http", port: 80, protocol: "TCP" }],
    clusterIP: "10.0.0.1",
  });
  assert.equal(out.status, status);
  assert.deepEqual(service.metadata, { name: "web" }, "the input is not changed");

  const slice = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "web-1", namespace: "app" },
    addressType: "IPv4",
    endpoints: [{ addresses: ["10.1.0.1"] }],
  } as unknown as KubeObject;
  assert.equal(admit([slice], problems, ADMISSION_KINDS)[0], slice, "nothing to default: itself");

  const bad = { ...slice, metadata: { name: "web-2", namespace: "app" }, endpoints: [{}] };
  const found: Problem[] = [];
  assert.deepEqual(admit([bad as KubeObject], found, ADMISSION_KINDS), []);
  assert.deepEqual(found.map((p) => p.field), ["endpoints[0].addresses"]);
});
