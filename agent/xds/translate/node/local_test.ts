import assert from "node:assert/strict";
import type { IRCluster } from "../../../../lib/ir/mod.ts";
import { translateEndpoints } from "../endpoint.ts";
import { inboundInternalListenerName } from "./inbound.ts";
import { localizeEndpoints } from "./local.ts";

const id = "spiffe://td.test/ns/b/sa/b";
const b: IRCluster = {
  name: "b.aether.internal",
  service: "b/b",
  port: 8080,
  protocol: "http1",
  endpoints: [
    { address: "10.0.0.2", port: 9090, identity: id },
    { address: "10.0.1.7", port: 9090, identity: id },
  ],
  identities: [id],
};
const plain: IRCluster = {
  name: "c.aether.internal",
  service: "b/c",
  port: 8080,
  protocol: "http1",
  endpoints: [{ address: "10.0.0.2", port: 80 }],
  identities: [],
  plaintextAllowed: true,
};
/** The clusters by name, a fresh map per test. */
const clusters = () => new Map([b, plain].map((c) => [c.name, c]));
const listener = (name: string) => ({ name, resource: { name } });
type Lb = { endpoint: { address: Record<string, unknown> } };
const addresses = (r: { resource: Record<string, unknown> }) =>
  (r.resource.endpoints as { lb_endpoints: Lb[] }[]).flatMap((g) =>
    g.lb_endpoints.map((lb) => lb.endpoint.address)
  );

Deno.test("localizeEndpoints: a local pod's mesh endpoint goes to its internal listener", () => {
  const eds = translateEndpoints([b, plain]);
  const internal = inboundInternalListenerName("10.0.0.2", "8080.b.aether.internal");
  const out = localizeEndpoints(eds, clusters(), [listener("inbound|b/b-0"), listener(internal)]);
  assert.deepEqual(addresses(out[0]), [
    { envoy_internal_address: { server_listener_name: internal } },
    { socket_address: { address: "10.0.1.7", port_value: 15008 } },
  ]);
  assert.equal(out[1], eds[1], "a plaintext endpoint at a local IP is left alone (same object)");
  assert.deepEqual(addresses(eds[0])[0], {
    socket_address: { address: "10.0.0.2", port_value: 15008 },
  }, "input not mutated");
});

Deno.test("localizeEndpoints: never names an internal listener the node does not have", () => {
  const eds = translateEndpoints([b, plain]);
  assert.equal(localizeEndpoints(eds, clusters(), [listener("inbound|b/b-0")]), eds);
  const otherSni = inboundInternalListenerName("10.0.0.2", "9000.b.aether.internal");
  const out = localizeEndpoints(eds, clusters(), [listener(otherSni)]);
  assert.equal(out[0], eds[0], "another port's internal listener is not this cluster's");
});
