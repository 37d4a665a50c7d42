/**
 * Real Envoy 1.40, TLSRoute: Passthrough — two backends with their own certificates behind one
 * listener port, chosen by SNI, never decrypted at the edge (no HTTP connection manager, no
 * transport socket on the chain), an unknown SNI refused; Terminate — the client sees the
 * listener's certificate and the backend gets plaintext TCP; Mixed — both modes on one port.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { freePorts, gateway, gatewayClass, startEdge } from "./harness.ts";
import { l4Route, l4Service, startLineServer, tlsExchange } from "./l4_peers.ts";
import { makeCert } from "./tls.ts";

type Resource = { name: string; resource: Record<string, unknown> };
type Chain = {
  name: string;
  filters: { name: string }[];
  filter_chain_match?: { server_names?: string[] };
  transport_socket?: unknown;
};

Deno.test("edge e2e: TLSRoute passthrough by SNI and terminate on real Envoy", async (t) => {
  const certA = await makeCert(["a.example.com"]);
  const certB = await makeCert(["b.example.com"]);
  const edgeCert = await makeCert(["t.example.com", "m.example.com"]);
  const a = startLineServer("a", "127.0.0.1", certA);
  const b = startLineServer("b", "127.0.0.1", certB);
  const plain = startLineServer("plain");
  const [passPort, termPort] = freePorts(2);
  const edge = await startEdge([
    gatewayClass(),
    gateway("gw", [
      {
        name: "pass",
        protocol: "TLS",
        port: passPort,
        hostname: "*.example.com",
        tls: { mode: "Passthrough" },
      },
      {
        // Mixed termination: a Terminate listener on the Passthrough listener's port.
        name: "mixed",
        protocol: "TLS",
        port: passPort,
        hostname: "m.example.com",
        tls: { mode: "Terminate", certificateRefs: [{ name: "edge-cert" }] },
      },
      {
        name: "term",
        protocol: "TLS",
        port: termPort,
        hostname: "t.example.com",
        tls: { mode: "Terminate", certificateRefs: [{ name: "edge-cert" }] },
      },
    ]),
    {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "edge-cert", namespace: "default" },
      type: "kubernetes.io/tls",
      data: { "tls.crt": btoa(edgeCert.cert), "tls.key": btoa(edgeCert.key) },
    },
    ...l4Service("a", a, { port: 8443 }),
    ...l4Service("b", b, { port: 8443 }),
    ...l4Service("plain", plain, { port: 7000 }),
    l4Route("TLSRoute", "a", {
      parentRefs: [{ name: "gw", sectionName: "pass" }],
      hostnames: ["a.example.com"],
      rules: [{ backendRefs: [{ name: "a", port: 8443 }] }],
    }),
    l4Route("TLSRoute", "b", {
      parentRefs: [{ name: "gw", sectionName: "pass" }],
      hostnames: ["b.example.com"],
      rules: [{ backendRefs: [{ name: "b", port: 8443 }] }],
    }),
    l4Route("TLSRoute", "mixed", {
      parentRefs: [{ name: "gw", sectionName: "mixed" }],
      hostnames: ["m.example.com"],
      rules: [{ backendRefs: [{ name: "plain", port: 7000 }] }],
    }),
    l4Route("TLSRoute", "term", {
      parentRefs: [{ name: "gw", sectionName: "term" }],
      hostnames: ["t.example.com"],
      rules: [{ backendRefs: [{ name: "plain", port: 7000 }] }],
    }),
  ]);
  const ca = [certA.ca, certB.ca, edgeCert.ca];
  try {
    await t.step("Passthrough: each SNI gets its backend's own certificate", async () => {
      for (const name of ["a", "b"]) {
        const r = await tlsExchange(passPort, `${name}.example.com`, ca, "ping\n");
        assertEquals(r.cn, `${name}.example.com`);
        assert(r.authorized, `${name}: certificate did not verify`);
        assertEquals(r.line, `${name} ping\n`);
      }
    });

    await t.step("Passthrough: an unknown SNI is refused", async () => {
      for (const sni of ["c.example.com", "a.other.org"]) {
        const r = await tlsExchange(passPort, sni, ca, "ping\n");
        assertEquals(r.cn, "", `${sni} completed a handshake`);
        assertEquals(r.line, "");
        assert(r.error, `${sni}: no error`);
      }
    });

    await t.step("Passthrough: no HTTP connection manager, nothing decrypted", async () => {
      const doc = await (await fetch(`http://${edge.agent.admin.address}/debug/xds`)).json();
      const listeners = doc.default.Listener.resources as Resource[];
      const pass = listeners.find((l) => l.name === `127.0.0.1:${passPort}`)!.resource;
      const chains = pass.filter_chains as Chain[];
      assertEquals(
        chains.map((c) => [
          c.filter_chain_match?.server_names,
          c.filters.map((f) => f.name),
          c.transport_socket === undefined ? "passthrough" : "terminate",
        ]),
        [
          [["m.example.com"], ["envoy.filters.network.tcp_proxy"], "terminate"],
          [["a.example.com"], ["envoy.filters.network.tcp_proxy"], "passthrough"],
          [["b.example.com"], ["envoy.filters.network.tcp_proxy"], "passthrough"],
        ],
      );
      assertEquals(
        (pass.listener_filters as { name: string }[]).map((f) => f.name),
        ["envoy.filters.listener.tls_inspector"],
      );
    });

    await t.step(
      "Terminate: the listener's certificate, plaintext TCP to the backend",
      async () => {
        const r = await tlsExchange(termPort, "t.example.com", ca, "ping\n");
        assertEquals(r.cn, "t.example.com");
        assert(r.authorized, "the edge certificate did not verify");
        assertEquals(r.line, "plain ping\n");
        const other = await tlsExchange(termPort, "x.example.com", ca, "ping\n");
        assertEquals(other.line, "");
      },
    );

    await t.step("Mixed: Terminate and Passthrough listeners on one port", async () => {
      const m = await tlsExchange(passPort, "m.example.com", ca, "ping\n");
      assertEquals([m.cn, m.authorized, m.line], ["t.example.com", true, "plain ping\n"]);
      const p = await tlsExchange(passPort, "a.example.com", ca, "ping\n");
      assertEquals([p.cn, p.line], ["a.example.com", "a ping\n"]);
    });
  } finally {
    await edge.close();
    for (const x of [a, b, plain]) await x.close();
  }
});
