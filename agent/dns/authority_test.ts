import assert from "node:assert/strict";
import dnsPacket from "dns-packet";
import { Buffer } from "node:buffer";
import { MeshZone } from "./authority.ts";
import { StaticRecords } from "./records.ts";
import { parseQuery, RCODE } from "./wire.ts";

const zone = new MeshZone("Mesh.Internal.", { ttl: 7, negativeTtl: 3 });
const recs = new StaticRecords({
  "WEB.mesh.internal": { a: ["10.0.0.1", "10.0.0.2"], aaaa: ["fd00::1"] },
});

function ask(name: string, type: string, edns = false, limit = 512, records = recs) {
  const raw = new Uint8Array(dnsPacket.encode({
    id: 42,
    type: "query",
    flags: dnsPacket.RECURSION_DESIRED,
    questions: [{ name, type }],
    additionals: edns ? [{ type: "OPT", name: ".", udpPayloadSize: 4096 }] : [],
  }));
  const q = parseQuery(raw).query!;
  return dnsPacket.decode(Buffer.from(zone.answer(raw, q, records, limit)));
}

Deno.test("authority: A and AAAA answers, compressed owner, case preserved", () => {
  const a = ask("wEb.mesh.internal", "A");
  assert.equal(a.id, 42);
  assert.equal(a.flag_aa, true);
  assert.equal(a.flag_rd, true);
  assert.deepEqual(a.answers.map((r: { data: string }) => r.data), ["10.0.0.1", "10.0.0.2"]);
  assert.equal(a.answers[0].name, "wEb.mesh.internal");
  assert.equal(a.answers[0].ttl, 7);
  const aaaa = ask("web.mesh.internal", "AAAA");
  assert.equal(aaaa.answers[0].data, "fd00::1");
});

Deno.test("authority: NODATA and NXDOMAIN carry the SOA; apex SOA", () => {
  for (const type of ["MX", "TXT", "SRV", "ANY"]) {
    const r = ask("web.mesh.internal", type);
    assert.equal(r.rcode, "NOERROR");
    assert.equal(r.answers.length, 0);
    assert.equal(r.authorities[0].type, "SOA");
    assert.equal(r.authorities[0].data.minimum, 3);
  }
  const nx = ask("other.mesh.internal", "A");
  assert.equal(nx.rcode, "NXDOMAIN");
  assert.equal(nx.authorities[0].name, "mesh.internal");
  const apex = ask("mesh.internal", "SOA");
  assert.equal(apex.answers[0].type, "SOA");
  assert.equal(ask("mesh.internal", "A").rcode, "NOERROR");
  assert.ok(zone.contains("x.mesh.internal"));
  assert.ok(!zone.contains("xmesh.internal"));
  assert.ok(!zone.contains("web.mesh.internal.ns.svc.cluster.local"));
});

Deno.test("authority: truncation at the limit, OPT only when asked", () => {
  const many = new StaticRecords({
    "big.mesh.internal": { a: Array.from({ length: 40 }, (_, i) => `10.1.0.${i}`), aaaa: [] },
  });
  const raw = new Uint8Array(
    dnsPacket.encode({
      id: 1,
      type: "query",
      questions: [{ name: "big.mesh.internal", type: "A" }],
    }),
  );
  const q = parseQuery(raw).query!;
  const tc = dnsPacket.decode(Buffer.from(zone.answer(raw, q, many, 512)));
  assert.equal(tc.flag_tc, true);
  assert.equal(tc.answers.length, 0);
  assert.equal(tc.additionals.length, 0);
  const full = dnsPacket.decode(Buffer.from(zone.answer(raw, q, many, 65535)));
  assert.equal(full.answers.length, 40);
  const e = ask("web.mesh.internal", "A", true);
  assert.equal(e.additionals[0].type, "OPT");
  assert.equal(e.additionals[0].udpPayloadSize, 1232);
  assert.equal(RCODE.NOERROR, 0);
});

Deno.test("authority: SRV of a named port, its _proto non-terminal, other names NXDOMAIN", () => {
  const ports = new StaticRecords({
    "web.mesh.internal": {
      a: ["10.0.0.1"],
      aaaa: ["fd00::1"],
      srv: [{ service: "http", proto: "tcp", port: 8080 }, {
        service: "dns",
        proto: "udp",
        port: 53,
      }],
    },
  });
  const ask2 = (name: string, type: string, limit = 512) => ask(name, type, false, limit, ports);
  const srv = ask2("_HTTP._tcp.Web.mesh.internal", "SRV");
  assert.equal(srv.rcode, "NOERROR");
  assert.equal(srv.flag_aa, true);
  assert.deepEqual(srv.answers.map((r: { name: string; ttl: number }) => [r.name, r.ttl]), [
    ["_HTTP._tcp.Web.mesh.internal", 7],
  ]);
  assert.deepEqual(srv.answers[0].data, {
    priority: 0,
    weight: 100,
    port: 8080,
    target: "web.mesh.internal",
  });
  assert.deepEqual(
    srv.additionals.map((
      r: { name: string; type: string; data: string },
    ) => [r.name, r.type, r.data]),
    [["web.mesh.internal", "A", "10.0.0.1"], ["web.mesh.internal", "AAAA", "fd00::1"]],
  );
  assert.equal(ask2("_dns._udp.web.mesh.internal", "ANY").answers[0].data.port, 53);
  for (
    const [name, type] of [["_http._tcp.web.mesh.internal", "A"], ["_tcp.web.mesh.internal", "SRV"]]
  ) {
    const r = ask2(name, type);
    assert.equal(r.rcode, "NOERROR", `${name} ${type} exists: NODATA`);
    assert.equal(r.answers.length, 0);
    assert.equal(r.authorities[0].type, "SOA");
  }
  for (
    const name of [
      "_http._udp.web.mesh.internal",
      "_grpc._tcp.web.mesh.internal",
      "_sctp.web.mesh.internal",
      "_http._tcp.other.mesh.internal",
      "_x.mesh.internal",
    ]
  ) {
    assert.equal(ask2(name, "SRV").rcode, "NXDOMAIN", name);
  }
  assert.equal(ask("_http._tcp.web.mesh.internal", "SRV").rcode, "NXDOMAIN", "no named ports");
  const tc = ask2("_http._tcp.web.mesh.internal", "SRV", 60);
  assert.equal(tc.flag_tc, true);
  assert.equal(tc.additionals.length, 0);
});

Deno.test("authority: SRV at a name itself — its records, targets uncompressed, their addresses", () => {
  const records = new StaticRecords({
    "hello.mesh.internal": {
      a: ["10.0.0.9"],
      aaaa: [],
      nameSrv: [{ port: 42, target: "10-1-0-5.a.eu.hello.mesh.internal" }, {
        port: 42,
        target: "hello.mesh.internal",
      }],
    },
    "10-1-0-5.a.eu.hello.mesh.internal": { a: ["10.1.0.5"], aaaa: [] },
    "web.mesh.internal": { a: ["10.0.0.1"], aaaa: [] },
  });
  const r = ask("Hello.mesh.internal", "SRV", false, 512, records);
  assert.equal(r.rcode, "NOERROR");
  assert.deepEqual(
    r.answers.map((a: { name: string; data: { port: number; target: string } }) => [
      a.name,
      a.data.port,
      a.data.target,
    ]),
    [
      ["Hello.mesh.internal", 42, "10-1-0-5.a.eu.hello.mesh.internal"],
      ["Hello.mesh.internal", 42, "hello.mesh.internal"],
    ],
  );
  assert.deepEqual(
    r.additionals.map((a: { name: string; type: string; data: string }) => [
      a.name,
      a.type,
      a.data,
    ]),
    [
      ["10-1-0-5.a.eu.hello.mesh.internal", "A", "10.1.0.5"],
      ["hello.mesh.internal", "A", "10.0.0.9"],
    ],
  );
  // A name without SRV records of its own: NODATA, as before.
  const none = ask("web.mesh.internal", "SRV", false, 512, records);
  assert.equal(none.rcode, "NOERROR");
  assert.equal(none.answers.length, 0);
});
