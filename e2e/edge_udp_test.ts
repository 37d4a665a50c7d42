/**
 * Real Envoy 1.40, UDPRoute: real DNS queries (dig) through a UDP listener to two real unbound
 * resolvers on loopback ports, weighted 80/20 (each dig query is a session of its own); one source
 * address:port keeps its resolver (udp_proxy session affinity); garbage datagrams sent meanwhile
 * do not disturb the queries.
 */
import dgram from "node:dgram";
import { assert, assertEquals } from "../testbed/assert.ts";
import { dig, freePort, type Peer, shortAnswers, startUnbound } from "../agent/dns/_test_utils.ts";
import { gateway, gatewayClass, startEdge } from "./harness.ts";
import { l4Route, l4Service } from "./l4_peers.ts";

/** unbound answering `who.l4.test. A <address>` from a static local zone. */
function resolver(address: string): Promise<Peer> {
  return startUnbound({
    server: ['local-zone: "l4.test." static', `local-data: "who.l4.test. 60 IN A ${address}"`],
  });
}

/**
 * `n` dig queries in one batch (a new source port, so a new session, per query), each tried up
 * to `tries` times 3 s apart (UDP: a datagram may drop when a socket's buffer is full).
 */
async function whoAnswers(port: number, n: number, tries = 2): Promise<Map<string, number>> {
  const file = await Deno.makeTempFile({ prefix: "aether-dig-" });
  try {
    await Deno.writeTextFile(file, "who.l4.test A\n".repeat(n));
    const out = await dig([
      "@127.0.0.1",
      "-p",
      String(port),
      "-f",
      file,
      "+short",
      `+tries=${tries}`,
      "+timeout=3",
    ]);
    const counts = new Map<string, number>();
    // Count answers, not lines: a retry that was answered is one answer.
    for (const answer of shortAnswers(out)) counts.set(answer, (counts.get(answer) ?? 0) + 1);
    return counts;
  } finally {
    await Deno.remove(file);
  }
}

/** Sends `n` datagrams of random bytes to 127.0.0.1:`port`. */
async function garbage(port: number, n: number): Promise<void> {
  const s = dgram.createSocket("udp4");
  try {
    for (let i = 0; i < n; i++) {
      const junk = crypto.getRandomValues(new Uint8Array(1 + (i % 300)));
      await new Promise<void>((r) => s.send(junk, port, "127.0.0.1", () => r()));
    }
  } finally {
    s.close();
  }
}

/** A DNS query for who.l4.test A with id `id`. */
function whoQuery(id: number): Uint8Array {
  const name = ["who", "l4", "test"].flatMap((l) => [l.length, ...new TextEncoder().encode(l)]);
  return new Uint8Array([id >> 8, id & 255, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, ...name, 0, 0, 1, 0, 1]);
}

/** Sends `n` queries from one socket (one source port: one session); the A answers seen. */
async function sameSourceAnswers(port: number, n: number): Promise<string[]> {
  const s = dgram.createSocket("udp4");
  const answers: string[] = [];
  try {
    await new Promise<void>((r) => s.bind(0, "127.0.0.1", () => r()));
    for (let i = 0; i < n; i++) {
      const reply = new Promise<Uint8Array>((res, rej) => {
        const timer = setTimeout(() => rej(new Error(`query ${i}: no answer`)), 5000);
        s.once("message", (m: Uint8Array) => {
          clearTimeout(timer);
          res(new Uint8Array(m));
        });
      });
      s.send(whoQuery(i + 1), port, "127.0.0.1");
      const m = await reply;
      answers.push([...m.subarray(m.length - 4)].join("."));
    }
  } finally {
    s.close();
  }
  return answers;
}

Deno.test("edge e2e: UDPRoute with dig to two unbound resolvers on real Envoy", async (t) => {
  const one = await resolver("192.0.2.1"), two = await resolver("192.0.2.2");
  const port = await freePort();
  const edge = await startEdge([
    gatewayClass(),
    gateway("gw", [{ name: "dns", protocol: "UDP", port }]),
    ...l4Service("dns-one", { hostname: one.address, port: one.port }, {
      port: 53,
      protocol: "UDP",
    }),
    ...l4Service("dns-two", { hostname: two.address, port: two.port }, {
      port: 53,
      protocol: "UDP",
    }),
    l4Route("UDPRoute", "dns", {
      parentRefs: [{ name: "gw" }],
      rules: [{
        backendRefs: [{ name: "dns-one", port: 53, weight: 80 }, {
          name: "dns-two",
          port: 53,
          weight: 20,
        }],
      }],
    }),
  ]);
  try {
    await t.step("dig answers through the edge, weighted 80/20 over 500 queries", async () => {
      const n = 500;
      const counts = await whoAnswers(port, n);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      assertEquals(total, n, `answers: ${JSON.stringify([...counts])}`);
      assertEquals([...counts.keys()].sort(), ["192.0.2.1", "192.0.2.2"]);
      const p1 = (counts.get("192.0.2.1")! / n) * 100;
      assert(Math.abs(p1 - 80) <= 5, `resolver one answered ${p1}%, want 80 ± 5`);
    });

    await t.step(
      "one source address:port is one session: every datagram, one resolver",
      async () => {
        for (let k = 0; k < 3; k++) {
          const answers = await sameSourceAnswers(port, 20);
          assertEquals(answers.length, 20);
          assertEquals(new Set(answers).size, 1, `answers of one source: ${answers}`);
          assert(["192.0.2.1", "192.0.2.2"].includes(answers[0]), answers[0]);
        }
      },
    );

    await t.step("garbage datagrams do not disturb the queries", async () => {
      // 500 datagrams in a burst can fill the listener's receive buffer on a busy machine, and
      // a query that arrives then is dropped by the kernel, not by Envoy: dig asks again (once
      // failed here, 199 of 200, with two tries under CI load), so four tries.
      const n = 200;
      const [counts] = await Promise.all([whoAnswers(port, n, 4), garbage(port, 500)]);
      const total = [...counts.values()].reduce((a, b) => a + b, 0);
      assertEquals(total, n, `answers: ${JSON.stringify([...counts])}`);
      const after = await whoAnswers(port, 20);
      assertEquals([...after.values()].reduce((a, b) => a + b, 0), 20);
    });

    await t.step("status: the route is accepted on the UDP listener", async () => {
      const doc = await (await fetch(`http://${edge.agent.admin.address}/status`)).json();
      const statuses = doc.config.objects as {
        kind: string;
        status: Record<string, unknown>;
      }[];
      const route = statuses.find((s) => s.kind === "UDPRoute")!;
      const conditions = (route.status.parents as {
        conditions: { type: string; status: string; reason: string }[];
      }[])[0].conditions;
      assertEquals(conditions.map((c) => `${c.type}=${c.status}/${c.reason}`), [
        "Accepted=True/Accepted",
        "ResolvedRefs=True/ResolvedRefs",
      ]);
    });
  } finally {
    await edge.close();
    await one.stop();
    await two.stop();
  }
});
