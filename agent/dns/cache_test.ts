import assert from "node:assert/strict";
import dnsPacket from "dns-packet";
import { Buffer } from "node:buffer";
import { DnsCache } from "./cache.ts";
import { parseQuery } from "./wire.ts";

function q(name: string, id = 1) {
  const raw = new Uint8Array(
    dnsPacket.encode({ id, type: "query", flags: 256, questions: [{ name, type: "A" }] }),
  );
  return { raw, q: parseQuery(raw).query! };
}
function resp(name: string, extra: Record<string, unknown>) {
  return new Uint8Array(dnsPacket.encode({
    id: 1,
    type: "response",
    flags: 256 | 128,
    questions: [{ name, type: "A" }],
    ...extra,
  }));
}
const soa = (ttl: number, minimum: number) => ({
  name: "example",
  type: "SOA",
  ttl,
  data: {
    mname: "ns.example",
    rname: "h.example",
    serial: 1,
    refresh: 1,
    retry: 1,
    expire: 1,
    minimum,
  },
});

Deno.test("cache: positive TTL = smallest RR TTL, counted down, ID and question case from the client", () => {
  let now = 0;
  const c = new DnsCache({ now: () => now });
  const a = q("host.example");
  assert.ok(c.store(
    a.q,
    resp("host.example", {
      answers: [
        { name: "host.example", type: "A", ttl: 30, data: "192.0.2.1" },
        { name: "host.example", type: "A", ttl: 10, data: "192.0.2.2" },
      ],
    }),
  ));
  now = 4000;
  const b = q("HOST.example", 99);
  const hit = dnsPacket.decode(Buffer.from(c.get(b.q, b.raw)!));
  assert.equal(hit.id, 99);
  assert.equal(hit.questions[0].name, "HOST.example");
  assert.deepEqual(hit.answers.map((r: { ttl: number }) => r.ttl), [26, 6]);
  now = 10000;
  assert.equal(c.get(b.q, b.raw), undefined, "expired at the smallest TTL");
});

Deno.test("cache: negative answers use min(SOA TTL, MINIMUM); no SOA → not cached; SERVFAIL never", () => {
  let now = 0;
  const c = new DnsCache({ now: () => now });
  const a = q("gone.example");
  assert.ok(
    c.store(a.q, resp("gone.example", { flags: 256 | 128 | 3, authorities: [soa(60, 20)] })),
  );
  now = 19000;
  assert.equal(c.get(a.q, a.raw)![3] & 0xf, 3);
  now = 20000;
  assert.equal(c.get(a.q, a.raw), undefined);
  assert.equal(c.store(a.q, resp("gone.example", { flags: 256 | 128 | 3 })), false);
  assert.equal(c.store(a.q, resp("gone.example", { flags: 256 | 128 | 2 })), false);
  const tc = resp("gone.example", { flags: 256 | 128 | 512, authorities: [soa(60, 20)] });
  assert.equal(c.store(a.q, tc), false);
});

Deno.test("cache: LRU bound and OPT options stripped", () => {
  const c = new DnsCache({ maxEntries: 2 });
  for (const n of ["a.example", "b.example", "c.example"]) {
    const x = q(n);
    c.store(x.q, resp(n, { answers: [{ name: n, type: "A", ttl: 30, data: "192.0.2.1" }] }));
  }
  assert.equal(c.size, 2);
  assert.equal(c.get(q("a.example").q, q("a.example").raw), undefined);
  const raw = new Uint8Array(dnsPacket.encode({
    id: 1,
    type: "query",
    questions: [{ name: "d.example", type: "A" }],
    additionals: [{ type: "OPT", name: ".", udpPayloadSize: 1232 }],
  }));
  const dq = parseQuery(raw).query!;
  c.store(
    dq,
    resp("d.example", {
      answers: [{ name: "d.example", type: "A", ttl: 30, data: "192.0.2.1" }],
      additionals: [{
        type: "OPT",
        name: ".",
        udpPayloadSize: 1232,
        options: [{ code: 10, data: Buffer.alloc(16) }],
      }],
    }),
  );
  const hit = dnsPacket.decode(Buffer.from(c.get(dq, raw)!));
  assert.equal(hit.additionals[0].type, "OPT");
  assert.deepEqual(hit.additionals[0].options, []);
});
