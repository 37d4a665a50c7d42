/**
 * A ServiceImport's clusterset VIP Service is dialled with the import's clusterset SNI
 * (`<port>.<svc>.<ns>.svc.clusterset.local`, IRCluster.sni), not its own mesh name: the exporting
 * clusters' pods know the Service port by it whether or not they import the Service themselves,
 * and an east-west gateway routes by it. A same-node pod's chain of that cluster has that name.
 */
import assert from "node:assert/strict";
import type { IRCluster } from "../../../../lib/ir/mod.ts";
import { clusterMtls, meshSni } from "../mtls.ts";
import { inboundPorts } from "./inbound.ts";

const ep = { address: "10.0.0.2", port: 42, identity: "spiffe://td/ns/shop/sa/hello" };
const vip: IRCluster = {
  name: "mcs-0123456789ab.aether.internal",
  service: "shop/mcs-0123456789ab",
  port: 42,
  protocol: "http1",
  endpoints: [ep],
  identities: [ep.identity],
  sni: "42.hello.shop.svc.clusterset.local",
};

Deno.test("vip sni: the upstream mTLS socket sends the import's clusterset SNI", () => {
  assert.equal(meshSni(vip), "42.hello.shop.svc.clusterset.local");
  const { sni: _, ...plain } = vip;
  assert.equal(meshSni(plain), "42.mcs-0123456789ab.aether.internal", "without: the mesh name");
  const m = clusterMtls(vip, "spiffe://td/ns/shop/sa/request", "td") as {
    transport_socket_matches: { transport_socket: { typed_config: { sni: string } } }[];
    transport_socket: { typed_config: { sni: string } };
  };
  assert.equal(
    m.transport_socket_matches[0].transport_socket.typed_config.sni,
    "42.hello.shop.svc.clusterset.local",
  );
  assert.equal(m.transport_socket.typed_config.sni, "42.hello.shop.svc.clusterset.local");
});

Deno.test("vip sni: a local endpoint's inbound chain has that name, no mcs-… alias", () => {
  assert.deepEqual(inboundPorts([vip]).get("10.0.0.2"), [
    { sni: "42.hello.shop.svc.clusterset.local", targetPort: 42 },
  ]);
});
