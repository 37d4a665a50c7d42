/**
 * Fuzz: ≥100,000 random and mutated packets sent to the running responder over UDP (plus a TCP
 * share) → no crash, no unhandled rejection, and a valid query still answers afterwards. The
 * generator is seeded (FUZZ_SEED to reproduce); the forwarded share goes to a fake upstream that
 * echoes the query back as a response.
 */
import assert from "node:assert/strict";
import dgram from "node:dgram";
import type { Buffer } from "node:buffer";
import dnsPacket from "dns-packet";
import { Buffer as NodeBuffer } from "node:buffer";
import { startResponder, tcpQueries, udpQuery } from "./_test_utils.ts";
import { RCODE } from "./wire.ts";

/** xorshift32: a small seeded PRNG so a failure is reproducible. */
function rng(seed: number) {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 4294967296;
  };
}

const TYPES = ["A", "AAAA", "MX", "TXT", "SRV", "SOA", "ANY", "PTR", "CNAME"];

function seeds(): Uint8Array[] {
  const names = ["web.mesh.internal", "nope.mesh.internal", "mesh.internal", "x.example"];
  const out: Uint8Array[] = [];
  for (const name of names) {
    for (const type of TYPES) {
      out.push(
        new Uint8Array(dnsPacket.encode({
          id: 1,
          type: "query",
          flags: dnsPacket.RECURSION_DESIRED,
          questions: [{ name, type }],
          additionals: type === "A" ? [{ type: "OPT", name: ".", udpPayloadSize: 4096 }] : [],
        })),
      );
    }
  }
  return out;
}

function mutate(r: () => number, base: Uint8Array): Uint8Array {
  let b = base.slice();
  const n = 1 + Math.floor(r() * 4);
  for (let i = 0; i < n; i++) {
    const op = Math.floor(r() * 6);
    const at = Math.floor(r() * b.length);
    if (op === 0) b[at] ^= 1 << Math.floor(r() * 8); // bit flip
    else if (op === 1) b[at] = Math.floor(r() * 256); // byte set
    else if (op === 2) b = b.slice(0, at); // truncate
    else if (op === 3) b[4 + Math.floor(r() * 8)] = Math.floor(r() * 4); // section counts
    else if (op === 4) { // insert random bytes
      const ins = Uint8Array.from(
        { length: 1 + Math.floor(r() * 16) },
        () => Math.floor(r() * 256),
      );
      const nb = new Uint8Array(b.length + ins.length);
      nb.set(b.subarray(0, at));
      nb.set(ins, at);
      nb.set(b.subarray(at), at + ins.length);
      b = nb;
    } else b[12 + Math.floor(r() * Math.max(1, b.length - 12))] = 0xc0; // compression pointers
  }
  return b;
}

Deno.test("fuzz: 100,000 random and mutated packets, then a valid query answers", async () => {
  const seed = Number(Deno.env.get("FUZZ_SEED") ?? Date.now() % 1e9);
  const r = rng(seed);
  const upstream = dgram.createSocket("udp4");
  upstream.on("message", (m: Buffer, ri: { address: string; port: number }) => {
    const b = new Uint8Array(m);
    if (b.length >= 3) b[2] |= 0x80;
    upstream.send(b, ri.port, ri.address);
  });
  await new Promise<void>((res) => upstream.bind(0, "127.0.0.1", () => res()));
  const { responder, port } = await startResponder({
    records: { "web.mesh.internal": { a: ["10.96.0.10"], aaaa: ["fd00::10"] } },
    upstreams: [`127.0.0.1:${upstream.address().port}`],
    forwardTimeoutMs: 200,
    rateLimit: { qps: 0 },
  });
  const client = dgram.createSocket("udp4");
  await new Promise<void>((res) => client.bind(0, "127.0.0.1", () => res()));
  let replies = 0;
  client.on("message", () => replies++);
  const base = seeds();
  const N = 100_000;
  const tcpBatch: Uint8Array[] = [];
  try {
    for (let i = 0; i < N; i++) {
      const pkt = r() < 0.3
        ? Uint8Array.from({ length: Math.floor(r() * 600) }, () => Math.floor(r() * 256))
        : mutate(r, base[Math.floor(r() * base.length)]);
      if (i % 100 === 0) tcpBatch.push(pkt);
      client.send(pkt, port, "127.0.0.1");
      // Pace the sender so the packets reach the responder instead of the socket's drop counter.
      if (i % 200 === 199) await new Promise((res) => setTimeout(res, 0));
      // The handler itself sees every packet even when the kernel drops some datagrams.
      responder.handler.handle(pkt, "127.0.0.2", i % 2 ? "udp" : "tcp");
    }
    // A TCP share: mutated messages framed correctly and pipelined on one connection.
    await tcpQueries("127.0.0.1", port, tcpBatch, tcpBatch.length, 30000);
    await new Promise((res) => setTimeout(res, 500));
    const raw = new Uint8Array(dnsPacket.encode({
      id: 77,
      type: "query",
      questions: [{ name: "web.mesh.internal", type: "A" }],
    }));
    const ok = await udpQuery("127.0.0.1", port, raw, 30000);
    assert.ok(ok, `no answer after fuzzing (seed ${seed})`);
    const d = dnsPacket.decode(NodeBuffer.from(ok));
    assert.equal(d.id, 77);
    assert.equal(ok[3] & 0xf, RCODE.NOERROR);
    assert.equal(d.answers[0].data, "10.96.0.10");
    // Liveness, not throughput: under load the kernel drops many of the 100k datagrams.
    assert.ok(replies > 100, `the responder answered during the run (${replies})`);
  } finally {
    client.close();
    await responder.close();
    upstream.close();
  }
});
