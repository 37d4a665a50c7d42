/**
 * Real Envoy 1.40, Gateway spec.addresses (as conformance GatewayStaticAddresses checks them):
 * listeners bind the Gateway's loopback addresses and no other; an unusable address turns the
 * Gateway Programmed=False AddressNotUsable and unbinds it; removing that address brings it back.
 * Several protocols on one Gateway on distinct ports (HTTP and TCP).
 */
import { assertEquals } from "../testbed/assert.ts";
import { request } from "./http_client.ts";
import {
  closeEchos,
  freePort,
  gateway,
  gatewayClass,
  httpRoute,
  serviceFor,
  startEchos,
  startEdge,
  waitFor,
} from "./harness.ts";
import { l4Route, l4Service, startLineServer, tcpExchange } from "./l4_peers.ts";

type Status = { kind: string; name: string; status: Record<string, unknown> };

Deno.test("edge e2e: Gateway spec.addresses bind loopback addresses; unusable → AddressNotUsable", async (t) => {
  const line = startLineServer("line");
  const echos = await startEchos("web");
  const tcpPort = freePort("127.0.0.2"), httpPort = freePort("127.0.0.2");
  const gw = (addresses: string[]) => ({
    ...gateway("gw", [
      { name: "tcp", protocol: "TCP", port: tcpPort },
      { name: "http", protocol: "HTTP", port: httpPort },
    ]),
    spec: {
      gatewayClassName: "aether",
      addresses: addresses.map((value) => ({ type: "IPAddress", value })),
      listeners: [
        { name: "tcp", protocol: "TCP", port: tcpPort },
        { name: "http", protocol: "HTTP", port: httpPort },
      ],
    },
  });
  const edge = await startEdge([
    gatewayClass(),
    gw(["127.0.0.2", "127.0.0.3"]),
    ...l4Service("line", line, { port: 7000 }),
    ...serviceFor("web", echos.web),
    l4Route("TCPRoute", "line", {
      parentRefs: [{ name: "gw", sectionName: "tcp" }],
      rules: [{ backendRefs: [{ name: "line", port: 7000 }] }],
    }),
    httpRoute("web", {
      parentRefs: [{ name: "gw", sectionName: "http" }],
      rules: [{ backendRefs: [{ name: "web", port: 8080 }] }],
    }),
  ]);
  const hello = (address: string) =>
    tcpExchange(address, tcpPort, "hi\n", (s) => s.includes("\n"), 3000);
  const status = async () => {
    const doc = await (await fetch(`http://${edge.agent.admin.address}/status`)).json();
    const s = (doc.config.objects as Status[]).find((o) => o.kind === "Gateway")!.status;
    const programmed = (s.conditions as { type: string; status: string; reason: string }[])
      .find((c) => c.type === "Programmed")!;
    return {
      programmed: `${programmed.status}/${programmed.reason}`,
      addresses: (s.addresses as { value: string }[]).map((a) => a.value),
    };
  };
  try {
    await t.step("each Gateway address serves TCP and HTTP; 127.0.0.1 does not", async () => {
      // Envoy binds its listeners on its workers after the ACK: poll the state asserted.
      for (const address of ["127.0.0.2", "127.0.0.3"]) {
        await waitFor(`TCP on ${address}`, async () => (await hello(address)) === "line hi\n");
        await waitFor(
          `HTTP on ${address}:${httpPort}`,
          async () =>
            (await request({ host: address, port: httpPort, path: "/" }).catch(() => null))
              ?.status === 200,
        );
      }
      assertEquals(await hello("127.0.0.1"), "");
      assertEquals(await status(), {
        programmed: "True/Programmed",
        addresses: ["127.0.0.2", "127.0.0.3"],
      });
    });

    await t.step("an unusable address: Programmed=False AddressNotUsable, unbound", async () => {
      await edge.apply(gw(["127.0.0.2", "198.51.100.7"]));
      assertEquals(await status(), { programmed: "False/AddressNotUsable", addresses: [] });
      await waitFor("127.0.0.2 to be unbound", async () => (await hello("127.0.0.2")) === "");
    });

    await t.step("without it the Gateway is programmed again", async () => {
      await edge.apply(gw(["127.0.0.2"]));
      assertEquals(await status(), { programmed: "True/Programmed", addresses: ["127.0.0.2"] });
      await waitFor("127.0.0.2 to serve", async () => (await hello("127.0.0.2")) === "line hi\n");
      await waitFor("127.0.0.3 to be unbound", async () => (await hello("127.0.0.3")) === "");
    });
  } finally {
    await edge.close();
    await line.close();
    await closeEchos(echos);
  }
});
