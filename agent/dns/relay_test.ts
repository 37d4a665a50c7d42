/**
 * What the responder does not own is relayed, not answered: against real Knot DNS upstreams (a
 * primary taking TSIG-signed UPDATE and serving AXFR/IXFR, a secondary that refreshes on NOTIFY),
 * with the real `nsupdate` and `dig` as clients. Each check shows the upstream acted (the record
 * added, the zone refreshed, the transfer's messages) or the reply is the upstream's own bytes,
 * which the responder's NOTIMP (its answer before relaying was built) is not.
 */
import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import dnsPacket from "dns-packet";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { startKnot, type TsigKey } from "./_knot_test_utils.ts";
import {
  dig,
  freePort,
  parseDig,
  shortAnswers,
  startResponder,
  tcpQueries,
  udpQuery,
} from "./_test_utils.ts";
import { parseQuery, RCODE } from "./wire.ts";
import { errorResponse } from "./wire_answer.ts";

const ZONE = "upd.test";
const bulk = Array.from({ length: 3000 }, (_, i) => `bulk${i} TXT "${"x".repeat(100)}"`);
const zoneFile = [
  `$ORIGIN ${ZONE}.`,
  "$TTL 300",
  `@ SOA ns.${ZONE}. hostmaster.${ZONE}. 1 3600 600 86400 60`,
  `@ NS ns.${ZONE}.`,
  "ns A 192.0.2.53",
  "www A 192.0.2.80",
  `_http._tcp.www SRV 0 10 8080 www.${ZONE}.`,
  ...bulk,
];

/** A message with `opcode` and one question (UPDATE: the zone section). */
function message(opcode: number, name: string, type = "SOA", id = 0x1234): Uint8Array {
  const b = new Uint8Array(dnsPacket.encode({ id, type: "query", questions: [{ name, type }] }));
  b[2] = (b[2] & 0x87) | (opcode << 3);
  return b;
}

/** Runs nsupdate with `script` (and `-y` when a key is given); resolves its exit code and output. */
async function nsupdate(script: string, args: string[] = [], key?: TsigKey) {
  const bin = await ensurePeer("nsupdate");
  const child = new Deno.Command(bin, {
    args: [...(key ? ["-y", `hmac-sha256:${key.name}:${key.secret}`] : []), ...args],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(script));
  await w.close();
  const out = await child.output();
  const dec = new TextDecoder();
  return { code: out.code, out: dec.decode(out.stdout) + dec.decode(out.stderr) };
}

/** The SOA serial a server holds for ZONE, asked directly. */
async function serialAt(port: number): Promise<number> {
  const r = await udpQuery("127.0.0.1", port, message(0, ZONE), 2000);
  assert.ok(r, "no SOA answer");
  const soa = (dnsPacket.decode(Buffer.from(r)) as { answers?: { type: string; data: unknown }[] })
    .answers?.find((a: { type: string }) => a.type === "SOA");
  return (soa?.data as { serial: number }).serial;
}

/** dig's XFR summary line and records (TTLs and all) for a zone transfer. */
function xfr(out: string): { size: string; records: string[] } {
  return {
    size: /;; XFR size: ([^\n]+)/.exec(out)?.[1] ?? `no transfer:\n${out.slice(0, 500)}`,
    records: out.split("\n").filter((l) => l.trim() && !l.startsWith(";")),
  };
}

Deno.test("relay: UPDATE, NOTIFY, transfers, other opcodes and SRV reach the upstream", async (t) => {
  const key = {
    name: "upd",
    secret: btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32)))),
  };
  const primary = await startKnot([{ domain: ZONE, records: zoneFile }], key);
  const secondary = await startKnot([{
    domain: ZONE,
    primary: { address: primary.address, port: primary.port },
  }]);
  const records = {
    "web.mesh.internal": {
      a: ["10.96.0.10"],
      aaaa: [],
      srv: [{ service: "http", proto: "tcp", port: 8080 }],
    },
  };
  const toPrimary = await startResponder({ records, upstreams: [`127.0.0.1:${primary.port}`] });
  const toSecondary = await startResponder({ records, upstreams: [`127.0.0.1:${secondary.port}`] });
  const viaPrimary = (...args: string[]) =>
    dig(["@127.0.0.1", "-p", String(toPrimary.port), "+tries=1", "+time=5", ...args]);
  const direct = (...args: string[]) =>
    dig(["@127.0.0.1", "-p", String(primary.port), "+tries=1", "+time=5", ...args]);
  try {
    await t.step(
      "UPDATE (TSIG-signed) through the responder is applied upstream, UDP and TCP",
      async () => {
        for (
          const [name, ip, args] of [["udp", "192.0.2.91", []], ["tcp", "192.0.2.92", [
            "-v",
          ]]] as const
        ) {
          const script = [
            `server 127.0.0.1 ${toPrimary.port}`,
            `zone ${ZONE}`,
            `update add ${name}.${ZONE}. 300 A ${ip}`,
            "send",
            "",
          ].join("\n");
          const r = await nsupdate(script, [...args], key);
          assert.equal(r.code, 0, r.out); // nsupdate also verifies the reply's TSIG
          assert.deepEqual(shortAnswers(await viaPrimary(`${name}.${ZONE}`, "A", "+short")), [ip]);
        }
        await primary.waitLog(/DDNS, finished, serial 2 -> 3/);
        toPrimary.responder.metrics.flush();
        assert.match(
          toPrimary.registry.render(),
          /aether_dns_relayed_total\{opcode="UPDATE",rcode="NOERROR"\} 2/,
        );
      },
    );

    await t.step(
      "the upstream's UPDATE verdicts come back as they are (NXRRSET, NOTAUTH)",
      async () => {
        const prereq = [
          `server 127.0.0.1 ${toPrimary.port}`,
          `zone ${ZONE}`,
          `prereq yxrrset nothing.${ZONE}. A`,
          `update add never.${ZONE}. 300 A 192.0.2.1`,
          "send",
          "",
        ].join("\n");
        const r = await nsupdate(prereq, [], key);
        assert.notEqual(r.code, 0);
        assert.match(r.out, /NXRRSET/, r.out);
        const unsigned = await nsupdate(prereq, []);
        assert.match(unsigned.out, /REFUSED|NOTAUTH/, unsigned.out);
        assert.doesNotMatch(unsigned.out, /NOTIMP/);
      },
    );

    await t.step("UPDATE of the mesh zone is ours to refuse", async () => {
      const r = await nsupdate([
        `server 127.0.0.1 ${toPrimary.port}`,
        "zone mesh.internal",
        "update add x.mesh.internal. 5 A 10.0.0.1",
        "send",
        "",
      ].join("\n"));
      assert.match(r.out, /REFUSED/, r.out);
      assert.doesNotMatch(primary.log(), /mesh\.internal/);
    });

    await t.step("NOTIFY through the responder makes the secondary refresh", async () => {
      const newest = await serialAt(primary.port);
      assert.ok(newest > 1, "the UPDATEs moved the primary's serial");
      assert.equal(
        await serialAt(secondary.port),
        1,
        "the secondary has not refreshed (refresh 3600 s)",
      );
      const out = await dig([
        "@127.0.0.1",
        "-p",
        String(toSecondary.port),
        "+opcode=notify",
        "+norecurse",
        ZONE,
        "SOA",
      ]);
      const r = parseDig(out);
      assert.equal(r.status, "NOERROR", out);
      assert.match(out, /opcode: NOTIFY, status: NOERROR/, "the secondary's answer, not NOTIMP");
      await secondary.waitLog(/notify, incoming/i);
      await secondary.waitLog(new RegExp(`zone updated.*serial 1 -> ${newest}`));
      assert.equal(await serialAt(secondary.port), newest);
    });

    {
      const proto = "+tcp";
      await t.step(
        "AXFR and IXFR of a zone not ours are streamed as the upstream sends them",
        async () => {
          const axfr = xfr(await viaPrimary("AXFR", ZONE, proto));
          const want = xfr(await direct("AXFR", ZONE, proto));
          assert.match(
            want.size,
            /messages [2-9]\d*|messages \d\d+/,
            "a transfer of several messages",
          );
          assert.equal(axfr.size, want.size);
          assert.deepEqual(axfr.records, want.records);
          const ixfr = xfr(await viaPrimary("IXFR=1", ZONE, proto));
          const wantIxfr = xfr(await direct("IXFR=1", ZONE, proto));
          assert.ok(
            wantIxfr.records.some((l) => l.includes("192.0.2.91")),
            wantIxfr.records.join("\n"),
          );
          assert.equal(ixfr.size, wantIxfr.size);
          assert.deepEqual(ixfr.records, wantIxfr.records);
          const upToDate = xfr(
            await viaPrimary(`IXFR=${await serialAt(primary.port)}`, ZONE, proto),
          );
          assert.equal(upToDate.records.length, 1, "up to date: the SOA alone");
          const mesh = await viaPrimary("AXFR", "mesh.internal", proto);
          assert.match(mesh, /Transfer failed/);
        },
      );
    }

    await t.step("IXFR over UDP: one message relayed as sent", async () => {
      const via = parseDig(await viaPrimary("IXFR=1", ZONE, "+notcp"));
      const want = parseDig(await direct("IXFR=1", ZONE, "+notcp"));
      assert.equal(via.status, want.status);
      assert.deepEqual(via.answer, want.answer);
    });

    await t.step("IQUERY, STATUS, DSO and unassigned opcodes: the upstream's bytes", async () => {
      for (const opcode of [1, 2, 3, 6, 7, 15]) {
        for (const transport of ["udp", "tcp"] as const) {
          const msg = message(opcode, ZONE);
          const send = (port: number) =>
            transport === "udp"
              ? udpQuery("127.0.0.1", port, msg, 3000)
              : tcpQueries("127.0.0.1", port, [msg]).then((r) => r[0]);
          const [via, want] = [await send(toPrimary.port), await send(primary.port)];
          assert.ok(want, `knot answers opcode ${opcode} over ${transport}`);
          assert.deepEqual(via, want, `opcode ${opcode} over ${transport}: knot's own reply`);
          const ours = errorResponse(
            msg,
            RCODE.NOTIMP,
            parseQuery(msg).query!.questionEnd,
            undefined,
            0,
          );
          assert.notDeepEqual(via, ours, "not the responder's own NOTIMP");
        }
      }
    });

    await t.step("an EDNS query without a question (cookie probe) is relayed", async () => {
      const probe = new Uint8Array(dnsPacket.encode({
        id: 0x4242,
        type: "query",
        questions: [],
        additionals: [{ type: "OPT", name: ".", udpPayloadSize: 1232, flags: 0, options: [] }],
      } as dnsPacket.Packet));
      const [via, want] = [
        await udpQuery("127.0.0.1", toPrimary.port, probe, 3000),
        await udpQuery("127.0.0.1", primary.port, probe, 3000),
      ];
      assert.ok(want);
      assert.deepEqual(via, want);
    });

    await t.step("SRV: a name not ours is forwarded, a mesh port is answered", async () => {
      const fwd = parseDig(await viaPrimary(`_http._tcp.www.${ZONE}`, "SRV"));
      assert.equal(fwd.status, "NOERROR");
      assert.match(fwd.answer[0] ?? "", /IN\s+SRV\s+0 10 8080 www\.upd\.test\.$/);
      const mesh = parseDig(await viaPrimary("_http._tcp.web.mesh.internal", "SRV"));
      assert.ok(mesh.flags.includes("aa"));
      assert.match(
        mesh.answer[0] ?? "",
        /^_http\._tcp\.web\.mesh\.internal\.\s+5\s+IN\s+SRV\s+0 100 8080 web\.mesh\.internal\.$/,
      );
      assert.match(
        mesh.raw,
        /ADDITIONAL SECTION:\nweb\.mesh\.internal\.\s+5\s+IN\s+A\s+10\.96\.0\.10/,
      );
      assert.equal(parseDig(await viaPrimary("_tcp.web.mesh.internal", "SRV")).status, "NOERROR");
      assert.equal(
        parseDig(await viaPrimary("_grpc._tcp.web.mesh.internal", "SRV")).status,
        "NXDOMAIN",
      );
      assert.equal(parseDig(await viaPrimary("web.mesh.internal", "SRV")).status, "NOERROR");
    });

    await t.step("an unreachable upstream: SERVFAIL for a relayed UPDATE", async () => {
      const dead = await startResponder({
        upstreams: [`127.0.0.1:${await freePort()}`],
        forwardTimeoutMs: 300,
      });
      try {
        const msg = message(5, ZONE);
        const r = await udpQuery("127.0.0.1", dead.port, msg, 5000);
        assert.equal(r![3] & 0xf, RCODE.SERVFAIL);
        const tcp = await tcpQueries("127.0.0.1", dead.port, [msg]);
        assert.equal(tcp[0][3] & 0xf, RCODE.SERVFAIL);
      } finally {
        await dead.responder.close();
      }
    });
  } finally {
    await toPrimary.responder.close();
    await toSecondary.responder.close();
    await secondary.stop();
    await primary.stop();
  }
});
