/** Hostile input, TCP framing/pipelining and the per-source rate limit, over real sockets. */
import assert from "node:assert/strict";
import dnsPacket from "dns-packet";
import { Buffer } from "node:buffer";
import { startResponder, tcpQueries, udpQuery } from "./_test_utils.ts";
import { put16, RCODE, u16 } from "./wire.ts";

const records = { "web.mesh.internal": { a: ["10.96.0.10"], aaaa: [] } };

function query(name: string, type = "A", id = 7, extra: Record<string, unknown> = {}): Uint8Array {
  return new Uint8Array(
    dnsPacket.encode({
      id,
      type: "query",
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ name, type, class: "IN" }],
      ...extra,
    }),
  );
}

function rcode(b: Uint8Array): number {
  return b[3] & 0xf;
}

Deno.test("hostile input over UDP: FORMERR / NOTIMP / REFUSED / SERVFAIL / BADVERS or drop", async () => {
  const { responder, port } = await startResponder({ records });
  const send = (m: Uint8Array, ms = 5000) => udpQuery("127.0.0.1", port, m, ms);
  try {
    assert.equal(await send(new Uint8Array([1, 2, 3]), 300), undefined, "short packet dropped");
    const resp = query("web.mesh.internal");
    resp[2] |= 0x80;
    assert.equal(await send(resp, 300), undefined, "a response is never answered");

    const two = query("web.mesh.internal");
    put16(two, 4, 2);
    const r2 = await send(two);
    assert.equal(rcode(r2!), RCODE.FORMERR);
    assert.equal(u16(r2!, 0), 7);

    const zero = query("web.mesh.internal").slice(0, 12);
    put16(zero, 4, 0);
    assert.equal(rcode((await send(zero))!), RCODE.FORMERR);

    // Other opcodes are relayed, except in the mesh zone, which is ours and read-only (relaying
    // itself is proven against real servers in relay_test.ts).
    const status = query("web.mesh.internal");
    status[2] = (status[2] & 0x87) | (2 << 3); // opcode STATUS
    assert.equal(rcode((await send(status))!), RCODE.NOTIMP);
    const update = query("mesh.internal", "SOA");
    update[2] = (update[2] & 0x87) | (5 << 3); // opcode UPDATE
    assert.equal(rcode((await send(update))!), RCODE.REFUSED);
    const elsewhere = query("example.org", "SOA");
    elsewhere[2] = (elsewhere[2] & 0x87) | (5 << 3);
    assert.equal(rcode((await send(elsewhere))!), RCODE.SERVFAIL, "relayed: no upstream here");
    const cutUpdate = elsewhere.slice(0, elsewhere.length - 1);
    assert.equal(rcode((await send(cutUpdate))!), RCODE.FORMERR, "a malformed UPDATE stays here");

    const trailing = new Uint8Array([...query("web.mesh.internal"), 0xde, 0xad]);
    assert.equal(rcode((await send(trailing))!), RCODE.FORMERR);

    const cut = query("web.mesh.internal").slice(0, 20);
    assert.equal(rcode((await send(cut))!), RCODE.FORMERR);

    const ptr = new Uint8Array([0, 9, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1]);
    assert.equal(rcode((await send(ptr))!), RCODE.FORMERR, "pointer in the question");

    const longLabel = new Uint8Array([
      0,
      9,
      1,
      0,
      0,
      1,
      0,
      0,
      0,
      0,
      0,
      0,
      64,
      ...new Uint8Array(64),
    ]);
    assert.equal(rcode((await send(longLabel))!), RCODE.FORMERR);

    const oversized = new Uint8Array(5000);
    oversized.set(query("web.mesh.internal"));
    assert.equal(rcode((await send(oversized))!), RCODE.FORMERR);

    assert.equal(rcode((await send(query("web.mesh.internal", "AXFR")))!), RCODE.REFUSED);
    const chaos = new Uint8Array(
      dnsPacket.encode({
        id: 3,
        type: "query",
        questions: [{ name: "web.mesh.internal", type: "TXT", class: "CH" }],
      }),
    );
    assert.equal(rcode((await send(chaos))!), RCODE.REFUSED);

    const v1 = query("web.mesh.internal", "A", 9, {
      additionals: [{ type: "OPT", name: ".", udpPayloadSize: 1232, ednsVersion: 1 }],
    });
    const bv = dnsPacket.decode(Buffer.from((await send(v1))!));
    const opt = bv.additionals.find((r: { type: string }) => r.type === "OPT");
    assert.equal(opt.extendedRcode, 1, "BADVERS = extended rcode 1 with header rcode 0");

    const twoOpt = query("web.mesh.internal", "A", 9, {
      additionals: [
        { type: "OPT", name: ".", udpPayloadSize: 1232 },
        { type: "OPT", name: ".", udpPayloadSize: 1232 },
      ],
    });
    assert.equal(rcode((await send(twoOpt))!), RCODE.FORMERR);

    const ok = await send(query("web.mesh.internal"));
    assert.equal(rcode(ok!), RCODE.NOERROR, "still answering");
    responder.metrics.flush();
    assert.ok(responder.metrics.dropped.get({ reason: "response" }) >= 1);
  } finally {
    await responder.close();
  }
});

Deno.test("TCP: length-prefixed, pipelined (several queries in one write), oversized", async () => {
  const { responder, port } = await startResponder({ records });
  try {
    const msgs = [
      query("web.mesh.internal", "A", 1),
      query("nope.mesh.internal", "A", 2),
      query("web.mesh.internal", "MX", 3),
      query("forwarded.example", "A", 4), // no upstreams: SERVFAIL, answered later
    ];
    const replies = await tcpQueries("127.0.0.1", port, msgs);
    const byId = new Map(replies.map((r) => [u16(r, 0), r]));
    assert.equal(byId.size, 4);
    assert.equal(rcode(byId.get(1)!), RCODE.NOERROR);
    assert.equal(u16(byId.get(1)!, 6), 1);
    assert.equal(rcode(byId.get(2)!), RCODE.NXDOMAIN);
    assert.equal(rcode(byId.get(3)!), RCODE.NOERROR);
    assert.equal(rcode(byId.get(4)!), RCODE.SERVFAIL);

    const big = new Uint8Array(6000);
    big.set(query("web.mesh.internal", "A", 5));
    const [r] = await tcpQueries("127.0.0.1", port, [big]);
    assert.equal(rcode(r), RCODE.FORMERR);

    // Garbage framing: a zero length closes the connection without killing the server.
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new Uint8Array([0, 0, 1, 2, 3]));
    assert.equal(await conn.read(new Uint8Array(10)), null);
    conn.close();
    const [again] = await tcpQueries("127.0.0.1", port, [query("web.mesh.internal")]);
    assert.equal(rcode(again), RCODE.NOERROR);
  } finally {
    await responder.close();
  }
});

Deno.test("rate limit: per source, drop with TC slips over UDP, REFUSED over TCP", async () => {
  const now = 1_000_000;
  const { responder, port } = await startResponder({
    records,
    now: () => now,
    rateLimit: { qps: 5, burst: 5, slip: 2 },
  });
  try {
    const answers = [];
    const drops = () => responder.metrics.rateLimited.get({ action: "drop" }) ?? 0;
    for (let i = 0; i < 12; i++) {
      // A dropped query is known by the drop counter, so an answer may take its time on a busy
      // machine (a 1 s timeout once counted a late answer as dropped).
      const before = drops();
      const msg = query("web.mesh.internal", "A", i);
      answers.push(await udpQuery("127.0.0.1", port, msg, 15_000, () => drops() > before));
    }
    const full = answers.filter((a) => a && !(a[2] & 0x02));
    const slipped = answers.filter((a) => a && a[2] & 0x02);
    const dropped = answers.filter((a) => !a);
    assert.equal(full.length, 5, "the burst is answered");
    assert.equal(slipped.length, 3, "every 2nd limited query gets TC=1");
    assert.equal(dropped.length, 4);
    assert.equal(u16(slipped[0]!, 6), 0, "a slip carries no answer");
    const [tcp] = await tcpQueries("127.0.0.1", port, [query("web.mesh.internal")]);
    assert.equal(rcode(tcp), RCODE.REFUSED);
    assert.equal(responder.metrics.rateLimited.get({ action: "drop" }), 4);
    assert.equal(responder.metrics.rateLimited.get({ action: "slip" }), 3);
  } finally {
    await responder.close();
  }
});
