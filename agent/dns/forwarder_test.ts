import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import dgram from "node:dgram";

import dnsPacket from "dns-packet";
import {
  Forwarder,
  matchesQuery,
  matchesRelay,
  parseUpstream,
  reachesSelf,
  upstreamsFromResolvConf,
} from "./forwarder.ts";
import { parseQuery, u16 } from "./wire.ts";

Deno.test("upstream parsing and resolv.conf", () => {
  assert.deepEqual(parseUpstream("10.0.0.1"), { host: "10.0.0.1", port: 53 });
  assert.deepEqual(parseUpstream("10.0.0.1:5353"), { host: "10.0.0.1", port: 5353 });
  assert.deepEqual(parseUpstream("[fd00::1]:54"), { host: "fd00::1", port: 54 });
  assert.deepEqual(parseUpstream("fd00::1"), { host: "fd00::1", port: 53 });
  assert.throws(() => parseUpstream("1.2.3.4:99999"));
  const text =
    "# x\nsearch a.svc.cluster.local\nnameserver 10.96.0.10\nnameserver fe80::1%eth0\nnameserver 10.0.0.5\n";
  assert.deepEqual(upstreamsFromResolvConf(text, [{ host: "10.0.0.5", port: 53 }]), [
    { host: "10.96.0.10", port: 53 },
    { host: "fe80::1", port: 53 },
  ]);
});

Deno.test("loop guard: only the responder's own address and port is excluded", () => {
  const text = "nameserver 127.0.0.1\nnameserver 127.0.0.53\n";
  // Responder on 127.0.0.1:18054: a local resolver on :53 is a real upstream.
  assert.deepEqual(upstreamsFromResolvConf(text, [{ host: "127.0.0.1", port: 18054 }]), [
    { host: "127.0.0.1", port: 53 },
    { host: "127.0.0.53", port: 53 },
  ]);
  // Responder on 127.0.0.1:53 itself: that nameserver is a loop.
  assert.deepEqual(upstreamsFromResolvConf(text, [{ host: "127.0.0.1", port: 53 }]), [
    { host: "127.0.0.53", port: 53 },
  ]);
  // A wildcard responder on :53 also answers on every loopback address.
  assert.equal(reachesSelf({ host: "127.0.0.53", port: 53 }, { host: "0.0.0.0", port: 53 }), true);
  assert.equal(reachesSelf({ host: "10.0.0.1", port: 53 }, { host: "0.0.0.0", port: 53 }), false);
  assert.equal(reachesSelf({ host: "::1", port: 53 }, { host: "::", port: 18054 }), false);
});

/** A fake upstream that records what it sees and answers via `reply`. */
async function fakeUpstream(reply: (q: Uint8Array, send: (b: Uint8Array) => void) => void) {
  const s = dgram.createSocket("udp4");
  const seen: { id: number; port: number }[] = [];
  s.on("message", (m: Buffer, r: { address: string; port: number }) => {
    const q = new Uint8Array(m);
    seen.push({ id: u16(q, 0), port: r.port });
    reply(q, (b) => s.send(b, r.port, r.address));
  });
  await new Promise<void>((res) => s.bind(0, "127.0.0.1", () => res()));
  return {
    port: s.address().port,
    seen,
    close: () => new Promise<void>((r) => s.close(() => r())),
  };
}

Deno.test("forwarder: random IDs and ports; wrong ID / question ignored; restores client ID", async () => {
  const up = await fakeUpstream((q, send) => {
    const p = dnsPacket.decode(Buffer.from(q));
    const good = new Uint8Array(
      dnsPacket.encode({
        ...p,
        type: "response",
        answers: [{ name: p.questions[0].name, type: "A", data: "192.0.2.9" }],
      }),
    );
    const wrongId = good.slice();
    wrongId[0] ^= 0xff;
    const wrongQ = new Uint8Array(
      dnsPacket.encode({
        ...p,
        type: "response",
        questions: [{ name: "evil.example", type: "A" }],
      }),
    );
    send(wrongId);
    send(wrongQ);
    send(good);
  });
  const f = new Forwarder({ upstreams: [{ host: "127.0.0.1", port: up.port }], timeoutMs: 10000 });
  try {
    for (let i = 0; i < 20; i++) {
      const raw = new Uint8Array(
        dnsPacket.encode({
          id: 4242,
          type: "query",
          questions: [{ name: "a.example", type: "A" }],
        }),
      );
      const r = await f.forward(raw, parseQuery(raw).query!.questionEnd);
      const d = dnsPacket.decode(Buffer.from(r!));
      assert.equal(d.id, 4242);
      assert.equal(d.answers[0].data, "192.0.2.9");
    }
    assert.ok(new Set(up.seen.map((s) => s.id)).size >= 19, "IDs vary");
    assert.ok(new Set(up.seen.map((s) => s.port)).size >= 19, "source ports vary");
    assert.ok(up.seen.every((s) => s.id !== 4242));
  } finally {
    await up.close();
  }
});

Deno.test("forwarder: timeout moves on, all dead → undefined", async () => {
  const silent = await fakeUpstream(() => {});
  const ok = await fakeUpstream((q, send) => {
    const r = q.slice();
    r[2] |= 0x80;
    send(r);
  });
  const attempts: string[] = [];
  const f = new Forwarder({
    upstreams: [{ host: "127.0.0.1", port: silent.port }, { host: "127.0.0.1", port: ok.port }],
    timeoutMs: 200,
    onAttempt: (_u, _s, result) => attempts.push(result),
  });
  try {
    const raw = new Uint8Array(
      dnsPacket.encode({ id: 1, type: "query", questions: [{ name: "b.example", type: "A" }] }),
    );
    const qe = parseQuery(raw).query!.questionEnd;
    assert.ok(await f.forward(raw, qe));
    assert.deepEqual(attempts, ["timeout", "ok"]);
    f.upstreams = [{ host: "127.0.0.1", port: silent.port }];
    assert.equal(await f.forward(raw, qe), undefined);
    assert.ok(matchesQuery(Object.assign(raw.slice(), { 2: raw[2] | 0x80 }), raw, qe));
  } finally {
    await silent.close();
    await ok.close();
  }
});

/** An UPDATE for example.org with a (fake) TSIG record: bytes the relay must not touch. */
function update(id: number): Uint8Array {
  const b = new Uint8Array(dnsPacket.encode({
    id,
    type: "query",
    questions: [{ name: "example.org", type: "SOA" }],
    authorities: [{ name: "new.example.org", type: "A", ttl: 300, data: "192.0.2.1" }],
    additionals: [{ name: "key.", type: "TXT", class: "ANY", ttl: 0, data: ["mac"] }],
  } as dnsPacket.Packet));
  b[2] = (b[2] & 0x87) | (5 << 3);
  return b;
}

Deno.test("forwarder relay: the message as sent but the ID; the reply as sent, TC and all", async () => {
  const seen: Uint8Array[] = [];
  const up = await fakeUpstream((q, send) => {
    seen.push(q);
    const r = q.slice(0, 12);
    r[2] |= 0x82; // a response, truncated
    r[3] = 0x04; // NOTIMP
    r[5] = 0; // no question: servers answer an opcode they lack so
    send(new Uint8Array([...r.subarray(0, 4), 0, 0, 0, 0, 0, 0, 0, 0]));
  });
  const f = new Forwarder({ upstreams: [{ host: "127.0.0.1", port: up.port }], timeoutMs: 5000 });
  try {
    const msg = update(0x0a0b);
    const qe = parseQuery(msg).query!.questionEnd;
    const reply = await f.relay(msg, qe, "udp");
    assert.equal(seen.length, 1, "no TCP retry of a TC reply: the client decides");
    assert.deepEqual(seen[0].subarray(2), msg.subarray(2), "every byte but the ID as sent");
    assert.notEqual(u16(seen[0], 0), 0x0a0b);
    assert.deepEqual(
      reply,
      new Uint8Array([0x0a, 0x0b, msg[2] | 0x82, 0x04, 0, 0, 0, 0, 0, 0, 0, 0]),
    );
  } finally {
    await up.close();
  }
});

Deno.test("forwarder relay: a reply must carry our ID and, when it has one, our question", () => {
  const sent = update(7);
  const qe = parseQuery(sent).query!.questionEnd;
  const reply = (edit: (b: Uint8Array) => void) => {
    const b = sent.slice(0, qe);
    b[2] |= 0x80;
    edit(b);
    return b;
  };
  assert.ok(matchesRelay(reply(() => {}), sent, qe));
  assert.ok(matchesRelay(reply((b) => (b[5] = 0)).subarray(0, 12), sent, qe), "no question");
  assert.ok(matchesRelay(reply((b) => (b[13] = 0x45)), sent, qe), "any case");
  assert.ok(!matchesRelay(reply((b) => (b[1] ^= 1)), sent, qe), "another ID");
  assert.ok(!matchesRelay(reply((b) => (b[14] = 0x79)), sent, qe), "another zone");
  assert.ok(!matchesRelay(sent, sent, qe), "not a response");
});
