/**
 * The batched UDP path (recvmmsg/sendmmsg through libc): it serves by default, answers a burst
 * from many sockets, and when its loop dies the responder keeps answering on the plain path at the
 * same port; when libc cannot be opened the plain path serves from the start.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import { Buffer } from "node:buffer";
import dnsPacket from "dns-packet";
import { startResponder, tcpQueries, udpQuery } from "./_test_utils.ts";
import { openLibc } from "./libc.ts";

const records = { "web.mesh.internal": { a: ["10.96.0.10"], aaaa: [] } };

function query(name: string, id: number): Uint8Array {
  return new Uint8Array(dnsPacket.encode({
    id,
    type: "query",
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type: "A" }],
  }));
}

function answerIp(reply: Uint8Array | undefined): string | undefined {
  if (!reply) return undefined;
  const a = dnsPacket.decode(Buffer.from(reply)).answers?.[0];
  return a?.type === "A" ? a.data as string : undefined;
}

/** Queries until an answer arrives (UDP: a datagram in flight while the socket changes is lost). */
async function answered(port: number, id: number, tries = 20): Promise<string | undefined> {
  for (let i = 0; i < tries; i++) {
    const ip = answerIp(await udpQuery("127.0.0.1", port, query("web.mesh.internal", id), 1000));
    if (ip) return ip;
  }
  return undefined;
}

Deno.test("batched udp: serves by default and answers a burst of 2,000 queries, ids intact", async () => {
  const { responder, port } = await startResponder({ records });
  // The client shares this thread with the server: a big receive buffer holds the answers
  // until it reads them.
  const sock = dgram.createSocket({ type: "udp4", recvBufferSize: 1 << 22 });
  try {
    assert.equal(responder.udpPath, "batched");
    const seen = new Set<number>();
    const done = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 30000);
      sock.on("message", (m: Buffer) => {
        const r = dnsPacket.decode(m);
        if (r.answers?.[0]?.data === "10.96.0.10") seen.add(r.id!);
        if (seen.size === 2000) (clearTimeout(timer), resolve());
      });
    });
    await new Promise<void>((r) => sock.bind(0, "127.0.0.1", r));
    // In waves of 200, each sent once the previous one is answered (or after 500 ms).
    for (let wave = 0; wave < 10; wave++) {
      for (let i = 0; i < 200; i++) sock.send(query("web.mesh.internal", wave * 200 + i), port);
      for (let t = 0; t < 50 && seen.size < (wave + 1) * 200; t++) {
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    await done;
    assert.ok(seen.size >= 1900, `answered ${seen.size} of 2000`);
  } finally {
    sock.close();
    await responder.close();
  }
});

Deno.test("batched udp: when the loop dies, the plain path answers on the same port", async () => {
  let crash = false;
  const { responder, port, registry, logs } = await startResponder({
    records,
    libc: () => {
      const real = openLibc();
      return {
        ...real,
        // EBADF, as if the socket had been closed under the loop.
        recvmmsg: (...a: Parameters<typeof real.recvmmsg>) => crash ? -1 : real.recvmmsg(...a),
        errno: () => crash ? 9 : real.errno(),
      };
    },
  });
  try {
    assert.equal(responder.udpPath, "batched");
    assert.equal(await answered(port, 1), "10.96.0.10");
    crash = true;
    // The next datagram wakes the loop, which fails; the plain socket takes over.
    assert.equal(await answered(port, 2), "10.96.0.10");
    assert.equal(responder.udpPath, "plain");
    assert.match(registry.render(), /aether_dns_udp_fallbacks_total 1/);
    assert.ok(logs.some((l) => l.includes("batched udp loop failed") && l.includes("errno 9")));
    const [tcp] = await tcpQueries("127.0.0.1", port, [query("web.mesh.internal", 3)]);
    assert.equal(answerIp(tcp), "10.96.0.10", "TCP unaffected");
  } finally {
    await responder.close();
  }
  // Closed for good: nothing answers on the port afterwards.
  assert.equal(await udpQuery("127.0.0.1", port, query("web.mesh.internal", 4), 300), undefined);
});

Deno.test("batched udp: no libc (FFI unavailable) → the plain path serves", async () => {
  const { responder, port, logs } = await startResponder({
    records,
    libc: () => {
      throw new Error("FFI is not allowed");
    },
  });
  try {
    assert.equal(responder.udpPath, "plain");
    assert.equal(await answered(port, 5), "10.96.0.10");
    assert.ok(logs.some((l) => l.includes("batched udp unavailable")));
  } finally {
    await responder.close();
  }
});
