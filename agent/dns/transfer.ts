/**
 * Where a zone transfer relayed over TCP ends — pure. An AXFR answer (RFC 5936) is the zone's SOA,
 * its records, and the SOA again; an IXFR answer (RFC 1995) is the newest SOA alone (the client is
 * up to date), or AXFR-style, or incremental: the newest SOA, then per change the old SOA, its
 * deletions, the new SOA, its additions, and the newest SOA once more to close. Any message may
 * hold any number of these records, so the responder follows them across messages.
 * @module
 */
import { RCODE, skipName, TYPE, u16 } from "./wire.ts";

function u32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) >>> 0) + (b[o + 1] << 16) + (b[o + 2] << 8) + b[o + 3];
}

/** The serial of the SOA whose RDATA starts at `o`, or undefined when it does not parse. */
function soaSerial(b: Uint8Array, o: number, end: number): number | undefined {
  const afterMname = skipName(b, o);
  const afterRname = afterMname < 0 ? -1 : skipName(b, afterMname);
  return afterRname < 0 || afterRname + 4 > end ? undefined : u32(b, afterRname);
}

/** One record of a section: type, where its RDATA starts and ends; undefined when malformed. */
interface Rr {
  type: number;
  rdata: number;
  end: number;
}

/** The records of `section` (0 answer, 1 authority) of a message, in order. */
function records(b: Uint8Array, section: 0 | 1): Rr[] | undefined {
  if (b.length < 12) return undefined;
  let o = 12;
  for (let i = u16(b, 4); i > 0; i--) {
    o = skipName(b, o);
    if (o < 0) return undefined;
    o += 4;
  }
  const out: Rr[] = [];
  const an = u16(b, 6), ns = u16(b, 8);
  const until = section === 0 ? an : an + ns;
  for (let i = 0; i < until; i++) {
    o = skipName(b, o);
    if (o < 0 || o + 10 > b.length) return undefined;
    const rr = { type: u16(b, o), rdata: o + 10, end: o + 10 + u16(b, o + 8) };
    if (rr.end > b.length) return undefined;
    if (section === 0 || i >= an) out.push(rr);
    o = rr.end;
  }
  return out;
}

/** Follows one transfer's answers, message by message. */
export class TransferTracker {
  readonly #ixfr: boolean;
  /** The client's serial (the SOA in an IXFR query's authority section). */
  readonly #clientSerial: number | undefined;
  #newest: number | undefined;
  #seen = 0;
  #incremental = false;
  #newestSeen = 0;

  /** `query`: the transfer's query (AXFR or IXFR) as the client sent it. */
  constructor(query: Uint8Array, qtype: number) {
    this.#ixfr = qtype === TYPE.IXFR;
    if (this.#ixfr) {
      const soa = records(query, 1)?.find((r) => r.type === TYPE.SOA);
      this.#clientSerial = soa && soaSerial(query, soa.rdata, soa.end);
    }
  }

  /**
   * Takes the next message of the answer; true when it is the last one: it closes the transfer, or
   * it ends it (an error rcode, no answer records, a record that does not parse).
   */
  last(msg: Uint8Array): boolean {
    if (msg.length < 12 || (msg[3] & 0xf) !== RCODE.NOERROR) return true;
    const rrs = records(msg, 0);
    if (!rrs || !rrs.length) return true;
    for (const rr of rrs) {
      const index = this.#seen++;
      if (rr.type !== TYPE.SOA) {
        if (index === 0) return true; // a transfer starts with the SOA; this is something else
        continue;
      }
      const serial = soaSerial(msg, rr.rdata, rr.end);
      if (index === 0) {
        this.#newest = serial;
        this.#newestSeen = 1;
        continue;
      }
      if (!this.#ixfr) return true; // AXFR: the second SOA closes it
      if (index === 1) this.#incremental = true;
      if (!this.#incremental) return true; // AXFR-style IXFR
      if (serial === this.#newest && ++this.#newestSeen === 3) return true;
    }
    // IXFR answered by the newest SOA alone: the client already has it.
    return this.#ixfr && this.#seen === 1 && this.#clientSerial !== undefined &&
      this.#newest !== undefined && serialAtMost(this.#newest, this.#clientSerial);
  }
}

/** `a` ≤ `b` in serial number arithmetic (RFC 1982). */
function serialAtMost(a: number, b: number): boolean {
  return a === b || ((b - a + 2 ** 32) % 2 ** 32) < 2 ** 31;
}
