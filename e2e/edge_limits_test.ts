/**
 * Edge limits against a real Envoy: a header name with `_` is rejected with 400, a stalled
 * request header block is closed after --request-headers-timeout, and connections over
 * --max-downstream-connections are refused while an established client keeps being served.
 */
import assert from "node:assert/strict";
import http from "node:http";
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

/** Reads from `conn` until EOF (or `limitMs`); returns what arrived and whether EOF was seen. */
async function readUntilClosed(conn: Deno.Conn, limitMs: number) {
  const buf = new Uint8Array(4096);
  let text = "";
  const timer = setTimeout(() => conn.close(), limitMs);
  let closed = false;
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) {
        closed = true;
        break;
      }
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
  } catch (e) {
    // A reset from the peer is a close too; our own timer closing the conn is not.
    closed = e instanceof Deno.errors.ConnectionReset;
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed */ }
  }
  return { text, closed };
}

Deno.test("edge limits: underscore headers 400, stalled headers closed, connection limit", async () => {
  const echos = await startEchos("app");
  const port = freePort();
  const maxConnections = 4;
  const { agent } = await startEdge([
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...serviceFor("app", echos.app),
    httpRoute("app", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["app.example.com"],
      rules: [{ backendRefs: [{ name: "app", port: 8080 }] }],
    }),
  ], {
    dnsAddress: "none",
    edgeLimits: { requestHeadersTimeoutMs: 1000 },
    maxDownstreamConnections: maxConnections,
  });
  const hogs: Deno.Conn[] = [];
  const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const get = (headers: Record<string, string> = {}, agentOpt?: http.Agent) =>
      request({ port, authority: "app.example.com", headers, agent: agentOpt });
    await waitFor("the route serves", async () => (await get().catch(() => null))?.status === 200);

    // 1. Header names with underscores: 400 from Envoy, the backend never sees them.
    const seen = echos.app.requests.length;
    const rejected = await get({ "x_user_id": "42" });
    assert.equal(rejected.status, 400, rejected.body);
    assert.equal(echos.app.requests.length, seen, "the rejected request did not reach the backend");
    assert.equal((await get({ "x-user-id": "42" })).status, 200);

    // 2. A header block that never ends is closed after the 1 s request headers timeout.
    const stalled = await Deno.connect({ hostname: "127.0.0.1", port });
    await stalled.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: app.example.com\r\n"));
    const cut = await readUntilClosed(stalled, 60000);
    assert.ok(cut.closed, `the stalled connection was closed by Envoy (got ${cut.text})`);
    assert.match(cut.text, /^(|HTTP\/1\.1 408[^]*)$/, "408 or a bare close");
    await waitFor(
      "the header timeout counted",
      async () =>
        /downstream_rq_header_timeout: [1-9]/.test(
          await agent.envoy!.admin("/stats?filter=downstream_rq_header_timeout"),
        ),
    );

    // 3. Connection limit: one client with a kept-alive connection, hogs fill the rest, one more
    // connection is refused; the kept-alive client keeps getting 200s.
    assert.equal((await get({}, keepAlive)).status, 200);
    for (let i = 0; i < maxConnections - 1; i++) {
      hogs.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    }
    await waitFor("Envoy counts every connection", async () => {
      const s = await agent.envoy!.admin("/stats?filter=downstream_cx_active");
      const active = [...s.matchAll(/^listener\.(?!admin)\S*\.downstream_cx_active: (\d+)$/gm)]
        .reduce((n, m) => n + Number(m[1]), 0);
      return active >= maxConnections;
    }, 60000);
    const extra = await Deno.connect({ hostname: "127.0.0.1", port });
    await extra.write(new TextEncoder().encode("GET / HTTP/1.1\r\nHost: app.example.com\r\n\r\n"))
      .catch(() => 0);
    const refused = await readUntilClosed(extra, 60000);
    assert.ok(
      refused.closed && refused.text === "",
      `over-limit connection refused: ${refused.text}`,
    );
    for (let i = 0; i < 20; i++) {
      assert.equal((await get({}, keepAlive)).status, 200, "the established client is served");
    }
    const overload = await agent.envoy!.admin("/stats?filter=downstream_cx_overflow|global_cx");
    assert.match(
      overload,
      /(downstream_global_cx_overflow|downstream_cx_overflow): [1-9]/,
      overload,
    );
  } finally {
    for (const h of hogs) {
      try {
        h.close();
      } catch { /* closed */ }
    }
    keepAlive.destroy();
    await agent.close();
    await closeEchos(echos);
  }
});
