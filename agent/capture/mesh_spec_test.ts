import assert from "node:assert/strict";
import type { MeshIR, MeshServicePort } from "../../lib/ir/mod.ts";
import { udpTargets } from "../../lib/ir/mod.ts";
import { meshCaptureSpec } from "./mesh_spec.ts";

const port = (p: number, extra: Partial<MeshServicePort> = {}): MeshServicePort => ({
  port: p,
  cluster: `c:${p}`,
  domains: [],
  producerRoutes: [],
  consumerRoutes: {},
  ...extra,
});
const udpRoute = { name: "shop/r", backends: [{ cluster: "v2", weight: 1 }], cluster: "v2" };

/** dns: TCP 53 and UDP 53 with a UDPRoute; plain-udp: UDP without a route; v6: dual stack. */
const mesh: MeshIR = {
  services: [
    {
      authority: "dns.aether.internal",
      namespace: "shop",
      name: "dns",
      vips: ["10.96.5.1"],
      ports: [port(53), port(53, { protocol: "UDP", producerUdp: udpRoute })],
    },
    {
      authority: "plain-udp.aether.internal",
      namespace: "shop",
      name: "plain-udp",
      vips: ["10.96.5.2"],
      ports: [port(514, { protocol: "UDP" })],
    },
    {
      authority: "v6.aether.internal",
      namespace: "shop",
      name: "v6",
      vips: ["10.96.5.3", "fd00::3"],
      ports: [port(5353, { protocol: "UDP", consumerUdp: { a: udpRoute } })],
    },
  ],
  clusters: [],
};

Deno.test("udpTargets: UDP ports with a UDPRoute (producer or consumer), local ports from 15100", () => {
  const t = udpTargets(mesh);
  assert.deepEqual(t.map((x) => [x.service.name, x.port.port, x.localPort]), [
    ["dns", 53, 15100],
    ["v6", 5353, 15101],
  ]);
});

Deno.test("meshCaptureSpec: TCP 53 is captured as TCP, UDP 53 by its map entry, a routeless UDP port not at all", () => {
  const spec = meshCaptureSpec(mesh);
  assert.deepEqual(spec.vips, [{ address: "10.96.5.1", port: 53 }]);
  assert.deepEqual(spec.udp, [
    { address: "10.96.5.1", port: 53, to: 15100 },
    { address: "10.96.5.3", port: 5353, to: 15101 },
    { address: "fd00::3", port: 5353, to: 15101 },
  ]);
  const none = meshCaptureSpec(mesh, { captured: (s) => s.name !== "dns" && s.name !== "v6" });
  assert.equal(none.udp, undefined);
});
