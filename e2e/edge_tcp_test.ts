/**
 * Real Envoy 1.40, TCPRoute end to end: a real Redis (Debian redis-server) behind a TCP listener;
 * our own line protocol weighted 80/20 over 1,000 connections; a missing backend's share of
 * connections refused while the route shows ResolvedRefs=False BackendNotFound.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { freePorts, gateway, gatewayClass, startEdge } from "./harness.ts";
import {
  type L4Backend,
  l4Route,
  l4Service,
  startLineServer,
  startRedis,
  tcpExchange,
} from "./l4_peers.ts";

interface Condition {
  type: string;
  status: string;
  reason: string;
}
type Status = { kind: string; name: string; status: Record<string, unknown> };

/** Opens `n` connections (`parallel` at a time), each sending one line; counts the answers. */
async function lineShares(port: number, n: number, parallel = 16): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const text = await tcpExchange("127.0.0.1", port, `hello ${i}\n`, (t) => t.includes("\n"));
      const who = text === "" ? "refused" : text.split(" ")[0];
      if (who !== "refused") assertEquals(text, `${who} hello ${i}\n`);
      counts.set(who, (counts.get(who) ?? 0) + 1);
    }
  };
  await Promise.all(Array.from({ length: parallel }, worker));
  return counts;
}

const percent = (counts: Map<string, number>, who: string, n: number) =>
  ((counts.get(who) ?? 0) / n) * 100;

Deno.test("edge e2e: TCPRoute with Redis and a weighted line protocol on real Envoy", async (t) => {
  const redis = await startRedis();
  const a = startLineServer("a"), b = startLineServer("b");
  const backends: L4Backend[] = [redis, a, b];
  const [redisPort, linePort, halfPort] = freePorts(3);
  const edge = await startEdge([
    gatewayClass(),
    gateway("gw", [
      { name: "redis", protocol: "TCP", port: redisPort },
      { name: "line", protocol: "TCP", port: linePort },
      { name: "half", protocol: "TCP", port: halfPort },
    ]),
    ...l4Service("redis", redis, { port: 6379 }),
    ...l4Service("line-a", a, { port: 7000 }),
    ...l4Service("line-b", b, { port: 7000 }),
    l4Route("TCPRoute", "redis", {
      parentRefs: [{ name: "gw", sectionName: "redis" }],
      rules: [{ backendRefs: [{ name: "redis", port: 6379 }] }],
    }),
    l4Route("TCPRoute", "line", {
      parentRefs: [{ name: "gw", sectionName: "line" }],
      rules: [{
        backendRefs: [{ name: "line-a", port: 7000, weight: 80 }, {
          name: "line-b",
          port: 7000,
          weight: 20,
        }],
      }],
    }),
    l4Route("TCPRoute", "half", {
      parentRefs: [{ name: "gw", sectionName: "half" }],
      rules: [{
        backendRefs: [{ name: "line-a", port: 7000, weight: 80 }, {
          name: "missing",
          port: 7000,
          weight: 20,
        }],
      }],
    }),
  ]);
  try {
    await t.step("Redis speaks through the edge: SET there, GET directly", async () => {
      const set = await tcpExchange(
        "127.0.0.1",
        redisPort,
        "SET aether:l4 through-envoy\r\nGET aether:l4\r\n",
        (s) => s.split("\r\n").length >= 4,
      );
      assertEquals(set, "+OK\r\n$13\r\nthrough-envoy\r\n");
      const direct = await tcpExchange(
        redis.hostname,
        redis.port,
        "GET aether:l4\r\n",
        (s) => s.split("\r\n").length >= 3,
      );
      assertEquals(direct, "$13\r\nthrough-envoy\r\n");
    });

    await t.step("80/20 over 1,000 connections, within ±5 points", async () => {
      const n = 1000;
      const counts = await lineShares(linePort, n);
      assertEquals(counts.get("refused") ?? 0, 0);
      const pa = percent(counts, "a", n);
      assert(Math.abs(pa - 80) <= 5, `a got ${pa}% of ${n} connections, want 80 ± 5`);
      assert(Math.abs(percent(counts, "b", n) - 20) <= 5, `b got ${counts.get("b")} of ${n}`);
    });

    await t.step("a missing backend refuses its 20% and shows BackendNotFound", async () => {
      const n = 1000;
      const counts = await lineShares(halfPort, n);
      const refused = percent(counts, "refused", n);
      assert(Math.abs(refused - 20) <= 5, `${refused}% refused, want 20 ± 5`);
      assert(Math.abs(percent(counts, "a", n) - 80) <= 5, `a got ${counts.get("a")} of ${n}`);
      const doc = await (await fetch(`http://${edge.agent.admin.address}/status`)).json();
      const statuses = doc.config.objects as Status[];
      const route = statuses.find((s) => s.kind === "TCPRoute" && s.name === "half")!;
      const conditions = (route.status.parents as { conditions: Condition[] }[])[0].conditions;
      assertEquals(
        conditions.map((c) => `${c.type}=${c.status}/${c.reason}`),
        ["Accepted=True/Accepted", "ResolvedRefs=False/BackendNotFound"],
      );
      const gw = statuses.find((s) => s.kind === "Gateway" && s.name === "gw")!;
      const listeners = gw.status.listeners as {
        name: string;
        attachedRoutes: number;
        supportedKinds: { kind: string }[];
      }[];
      assertEquals(
        listeners.map((l) => [l.name, l.attachedRoutes, l.supportedKinds.map((k) => k.kind)]),
        [["redis", 1, ["TCPRoute"]], ["line", 1, ["TCPRoute"]], ["half", 1, ["TCPRoute"]]],
      );
    });
  } finally {
    await edge.close();
    for (const x of backends) await x.close();
  }
});
