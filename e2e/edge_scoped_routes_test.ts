/**
 * Real Envoy 1.40: a listener served as scoped routes (`--scoped-routes-at`, here 3 so a few hosts
 * suffice): Envoy holds a scope and a route table per hostname (its config_dump), each host is
 * routed by its own table, the Host's case and port do not matter, a Host no route names gets 404,
 * and edits, an added and a removed host are served once the agent is ready. A wildcard hostname
 * turns the listener back into one table with VHDS (a scope cannot be a wildcard) and its removal
 * back to scopes, every host served throughout.
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
} from "./harness.ts";

const route = (i: number, backend: string, hostname = `h${i}.example.com`) =>
  httpRoute(`r${i}`, {
    parentRefs: [{ name: "gw" }],
    hostnames: [hostname],
    rules: [{ backendRefs: [{ name: backend, port: 8080 }] }],
  });

Deno.test("edge e2e: scoped routes — a table per host, edits, case and port, back and forth with VHDS", async (t) => {
  const echos = await startEchos("a", "b");
  const port = freePort();
  const base = [
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...serviceFor("a", echos.a),
    ...serviceFor("b", echos.b),
  ];
  const edge = await startEdge([...base, ...[0, 1, 2, 3, 4].map((i) => route(i, "a"))], {
    scopedRoutesAt: 3,
  });
  const served = async (host: string) => {
    const r = await request({ port, authority: host });
    return r.status === 200 ? String(r.json?.backend) : String(r.status);
  };
  /** Envoy's scopes (their keys) and the route tables it holds, from its config_dump. */
  const held = async () => {
    const dump = JSON.parse(await edge.agent.envoy!.admin("/config_dump"));
    const text = JSON.stringify(dump);
    const keys = [...text.matchAll(/"string_key":"([^"]+)"/g)].map((m) => m[1]).sort();
    const vhds = text.includes('"vhds"');
    return { keys, vhds };
  };
  try {
    await t.step("Envoy holds a scope per hostname, no VHDS table", async () => {
      const { keys, vhds } = await held();
      assertEquals(keys, [0, 1, 2, 3, 4].map((i) => `h${i}.example.com`));
      assertEquals(vhds, false);
    });

    await t.step("each host by its table; case and port do not matter; unknown → 404", async () => {
      for (let i = 0; i < 5; i++) assertEquals(await served(`h${i}.example.com`), "a");
      assertEquals(await served("H2.Example.COM"), "a");
      assertEquals(await served(`h3.example.com:${port}`), "a");
      assertEquals(await served("H4.EXAMPLE.COM:80"), "a");
      assertEquals(await served("nope.example.com"), "404");
    });

    await t.step("an edit, an added host and a removed one are served once ready", async () => {
      edge.source.remove(route(0, "a"));
      await edge.apply(route(1, "b"), route(5, "b"));
      assertEquals(await served("h1.example.com"), "b");
      assertEquals(await served("h5.example.com"), "b");
      assertEquals(await served("h0.example.com"), "404");
      assertEquals(await served("h2.example.com"), "a");
      assertEquals((await held()).keys.length, 5);
    });

    await t.step("a wildcard hostname: one table with VHDS, every host still served", async () => {
      await edge.apply(route(9, "b", "*.wild.example.org"));
      assertEquals(await served("x.wild.example.org"), "b");
      assertEquals(await served("h1.example.com"), "b");
      assertEquals(await served("H2.EXAMPLE.COM"), "a");
      assertEquals((await held()).vhds, true);
    });

    await t.step("the wildcard gone: scopes again", async () => {
      edge.source.remove(route(9, "b"));
      await edge.agent.waitReady(60000);
      assertEquals(await served("x.wild.example.org"), "404");
      for (const i of [1, 2, 3, 4, 5]) {
        assertEquals(await served(`h${i}.example.com`), i === 1 || i === 5 ? "b" : "a");
      }
      const { keys } = await held();
      assertEquals(keys, [1, 2, 3, 4, 5].map((i) => `h${i}.example.com`));
    });
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});

Deno.test("edge e2e: scoped routes on demand — Envoy fetches a host's table on its first request", async (t) => {
  const echos = await startEchos("a", "b");
  const port = freePort();
  const edge = await startEdge([
    gatewayClass(),
    gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    ...serviceFor("a", echos.a),
    ...serviceFor("b", echos.b),
    ...[0, 1, 2, 3, 4].map((i) => route(i, "a")),
  ], { scopedRoutesAt: 3, scopedRoutesOnDemand: true });
  const served = async (host: string) => {
    const r = await request({ port, authority: host });
    return r.status === 200 ? String(r.json?.backend) : String(r.status);
  };
  /** The hosts whose route table Envoy holds (each table's one virtual host is named after it). */
  const tables = async () => {
    const text = await edge.agent.envoy!.admin("/config_dump?resource=dynamic_route_configs");
    return [
      ...new Set([...text.matchAll(/"name": ?"http\.\d+\/(h\d\.example\.com)"/g)].map((m) => m[1])),
    ]
      .sort();
  };
  try {
    await t.step(
      "ready with every scope and no table; a first request fetches its host's",
      async () => {
        assertEquals(await tables(), []);
        assertEquals(await served("h1.example.com"), "a");
        assertEquals(await served("H2.EXAMPLE.COM"), "a");
        assertEquals(await tables(), ["h1.example.com", "h2.example.com"]);
        assertEquals(await served("nope.example.com"), "404");
      },
    );

    await t.step("an edit of a fetched host and of one never asked for are served", async () => {
      await edge.apply(route(1, "b"), route(3, "b"));
      assertEquals(await served("h1.example.com"), "b");
      assertEquals(await served("h3.example.com"), "b");
      assertEquals(await served("h4.example.com"), "a");
    });
  } finally {
    await edge.close();
    await closeEchos(echos);
  }
});
