/**
 * A pod's :15008 chains also take the clusterset SNI of its Service's ports, which callers in
 * other clusters send when they dial it as an endpoint of the ServiceImport — unless a chain of
 * its own already has that name (this cluster's ServiceImport cluster, when a route uses it).
 */
import assert from "node:assert/strict";
import type { IRCluster } from "../../../../lib/ir/mod.ts";
import { inboundPorts } from "./inbound.ts";

const ep = { address: "10.0.0.2", port: 9090, identity: "spiffe://td/ns/shop/sa/web" };
const service: IRCluster = {
  name: "web.aether.internal",
  service: "shop/web",
  port: 8080,
  protocol: "http1",
  endpoints: [ep],
};

Deno.test("inbound: a Service port's chain takes its clusterset SNI too", () => {
  assert.deepEqual(inboundPorts([service]).get("10.0.0.2"), [{
    sni: "8080.web.aether.internal",
    targetPort: 9090,
    aliases: ["8080.web.shop.svc.clusterset.local"],
  }]);
});

Deno.test("inbound: the clusterset SNI is no alias when the import's own cluster has it", () => {
  const imported: IRCluster = {
    ...service,
    name: "web.shop.svc.clusterset.local:8080",
    endpoints: [{ ...ep, priority: 0 }],
  };
  assert.deepEqual(inboundPorts([service, imported]).get("10.0.0.2"), [
    { sni: "8080.web.aether.internal", targetPort: 9090 },
    { sni: "8080.web.shop.svc.clusterset.local", targetPort: 9090 },
  ]);
});

Deno.test("inbound: endpoints without identity and UDP ports get no clusterset SNI", () => {
  const udp: IRCluster = { ...service, name: "dns.aether.internal", udp: true };
  assert.deepEqual(inboundPorts([udp]).get("10.0.0.2"), [
    { sni: "8080.dns.aether.internal", targetPort: 9090 },
  ]);
  const plain: IRCluster = { ...service, endpoints: [{ address: "10.0.0.2", port: 9090 }] };
  assert.equal(inboundPorts([plain]).size, 0);
});
