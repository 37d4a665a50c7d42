import assert from "node:assert/strict";
import dnsPacket from "dns-packet";
import { TransferTracker } from "./transfer.ts";
import { TYPE } from "./wire.ts";

const soa = (serial: number) => ({
  name: "z.test",
  type: "SOA",
  data: {
    mname: "ns.z.test",
    rname: "h.z.test",
    serial,
    refresh: 1,
    retry: 1,
    expire: 1,
    minimum: 1,
  },
});
const a = (n: number) => ({ name: `h${n}.z.test`, type: "A", data: `192.0.2.${n}` });

/** One answer message holding `answers` (the question only in the first, as servers do). */
function msg(answers: unknown[], opts: { rcode?: string; question?: boolean } = {}): Uint8Array {
  return new Uint8Array(dnsPacket.encode({
    id: 1,
    type: "response",
    rcode: opts.rcode,
    questions: opts.question === false ? [] : [{ name: "z.test", type: "AXFR" }],
    answers,
  } as dnsPacket.Packet));
}

function query(type: "AXFR" | "IXFR", serial?: number): Uint8Array {
  return new Uint8Array(dnsPacket.encode({
    id: 1,
    type: "query",
    questions: [{ name: "z.test", type }],
    authorities: serial === undefined ? [] : [soa(serial)],
  } as dnsPacket.Packet));
}

/** Feeds messages; returns the index of the one the tracker calls last (-1: none). */
function lastOf(t: TransferTracker, msgs: Uint8Array[]): number {
  return msgs.findIndex((m) => t.last(m));
}

Deno.test("transfer: AXFR ends at the second SOA, across messages", () => {
  const t = new TransferTracker(query("AXFR"), TYPE.AXFR);
  const stream = [msg([soa(5), a(1)]), msg([a(2), a(3)], { question: false }), msg([a(4), soa(5)])];
  assert.equal(lastOf(t, stream), 2);
  const one = new TransferTracker(query("AXFR"), TYPE.AXFR);
  assert.equal(lastOf(one, [msg([soa(5), a(1), soa(5)])]), 0, "a single message");
});

Deno.test("transfer: IXFR incremental, AXFR-style, up to date", () => {
  // SOA(9), then per change: old SOA, deletions, new SOA, additions; SOA(9) closes.
  const inc = new TransferTracker(query("IXFR", 7), TYPE.IXFR);
  const diffs = [
    msg([soa(9), soa(7), a(1), soa(8), a(2)]),
    msg([soa(8), a(2), soa(9)], { question: false }),
    msg([a(3), soa(9)], { question: false }),
  ];
  assert.equal(lastOf(inc, diffs), 2, "the third SOA(9) closes, not the second");
  const axfrStyle = new TransferTracker(query("IXFR", 7), TYPE.IXFR);
  assert.equal(lastOf(axfrStyle, [msg([soa(9), a(1)]), msg([a(2), soa(9)])]), 1);
  const current = new TransferTracker(query("IXFR", 9), TYPE.IXFR);
  assert.equal(lastOf(current, [msg([soa(9)])]), 0, "the client has serial 9 already");
  // The newest SOA alone, when the client is behind: more follows (one record per message).
  const behind = new TransferTracker(query("IXFR", 7), TYPE.IXFR);
  assert.equal(lastOf(behind, [msg([soa(9)]), msg([soa(7)]), msg([soa(9)]), msg([soa(9)])]), 3);
});

Deno.test("transfer: an error, an empty or a non-SOA first message ends it", () => {
  for (
    const m of [msg([], { rcode: "NOTAUTH" }), msg([]), msg([a(1), soa(1)]), new Uint8Array(5)]
  ) {
    assert.equal(new TransferTracker(query("AXFR"), TYPE.AXFR).last(m), true);
  }
  const cut = msg([soa(5), a(1)]);
  assert.equal(
    new TransferTracker(query("AXFR"), TYPE.AXFR).last(cut.subarray(0, cut.length - 3)),
    true,
    "a record that does not parse",
  );
});
