/**
 * DNS wire facts and a strict, allocation-light query parser on raw bytes (the response builders
 * are in wire_answer.ts). The hot path (mesh answers) never builds a `dns-packet` object;
 * `dns-packet` is used where whole messages must be understood (cache, forwarder checks, tests).
 * @module
 */

/** Record types used by the responder. */
export const TYPE = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  OPT: 41,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
} as const;

/** Opcodes (RFC 1035, 1996, 2136, 8490). Only QUERY is answered here; the others are relayed. */
export const OPCODE = {
  QUERY: 0,
  IQUERY: 1,
  STATUS: 2,
  NOTIFY: 4,
  UPDATE: 5,
  DSO: 6,
} as const;

/** Response codes (RFC 1035, 6891). */
export const RCODE = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  NOTAUTH: 9,
  BADVERS: 16,
} as const;

/** Class IN. */
export const CLASS_IN = 1;
/** Largest QUERY the responder accepts; anything longer is answered FORMERR. */
export const MAX_QUERY_BYTES = 4096;
/** Largest relayed message (any opcode but QUERY): the TCP length prefix's limit. */
export const MAX_RELAY_BYTES = 65535;
/** Classic UDP payload limit without EDNS0. */
export const UDP_LIMIT_NO_EDNS = 512;

/** Header flag bits (RFC 1035 4.1.1, RFC 4035 CD). */
export const FLAG = {
  QR: 0x8000,
  AA: 0x0400,
  TC: 0x0200,
  RD: 0x0100,
  RA: 0x0080,
  CD: 0x0010,
} as const;

/** EDNS0 facts of a query's OPT record. */
export interface Edns {
  udpSize: number;
  version: number;
  dnssecOk: boolean;
}

/** A query that passed every structural check. */
export interface Query {
  id: number;
  /** Header flags word (bits 0-15 of bytes 2-3). */
  flags: number;
  opcode: number;
  /** Lower-case name without the trailing dot, bytes outside [!-~] and "." "\" as \DDD. */
  qname: string;
  qtype: number;
  qclass: number;
  /** Offset just past the question (the question is raw[12..questionEnd)). */
  questionEnd: number;
  /** Wire length of the question name. */
  nameLen: number;
  /** Present when the query carried an OPT record. */
  edns: Edns | undefined;
  /**
   * Set when the message is not a one-question QUERY — another opcode (UPDATE, NOTIFY, IQUERY,
   * STATUS, DSO, unassigned) or a QUERY without a question but with EDNS (a cookie probe, RFC 7873
   * §5.4; without EDNS it is FORMERR): such a message is
   * relayed upstream as received, never answered here. `qname`/`qtype`/`qclass` are then those of
   * its first question (UPDATE: the zone), or "" / 0 / 0 without one (`questionEnd` is 12), and
   * `edns` is not judged (the upstream answers BADVERS itself).
   */
  relay?: true;
}

/** Why a packet is not a usable query: drop it, or answer with this rcode. */
export interface Reject {
  drop: boolean;
  rcode: number;
  /** Set when the question itself parsed (it is echoed in the error answer). */
  questionEnd: number;
}

/** Result of {@link parseQuery}. */
export type Parsed = { query: Query; reject?: undefined } | { query?: undefined; reject: Reject };

function reject(rcode: number, questionEnd = 0, drop = false): Parsed {
  return { reject: { drop, rcode, questionEnd } };
}

/** Reads a big-endian 16-bit value. */
export function u16(b: Uint8Array, o: number): number {
  return (b[o] << 8) | b[o + 1];
}

/** Writes a big-endian 16-bit value. */
export function put16(b: Uint8Array, o: number, v: number): void {
  b[o] = (v >>> 8) & 0xff;
  b[o + 1] = v & 0xff;
}

/** Writes a big-endian 32-bit value. */
export function put32(b: Uint8Array, o: number, v: number): void {
  b[o] = (v >>> 24) & 0xff;
  b[o + 1] = (v >>> 16) & 0xff;
  b[o + 2] = (v >>> 8) & 0xff;
  b[o + 3] = v & 0xff;
}

/** Skips a possibly compressed name; returns the offset after it or -1 when malformed. */
export function skipName(b: Uint8Array, o: number): number {
  for (let n = 0; n < 128; n++) {
    if (o >= b.length) return -1;
    const len = b[o];
    if (len === 0) return o + 1;
    if ((len & 0xc0) === 0xc0) return o + 2 <= b.length ? o + 2 : -1;
    if (len & 0xc0) return -1;
    o += 1 + len;
  }
  return -1;
}

/**
 * Parses and validates a query: header, exactly one uncompressed question, the remaining sections
 * walked to the exact end of the message, at most one OPT record (root owner). A message of
 * another opcode, or a QUERY without a question, comes back with `relay` set (structure checked
 * the same way, contents not judged). Never throws.
 */
export function parseQuery(b: Uint8Array): Parsed {
  if (b.length < 12) return reject(RCODE.FORMERR, 0, true);
  const flags = u16(b, 2);
  if (flags & FLAG.QR) return reject(RCODE.FORMERR, 0, true); // a response: never answer one
  const opcode = (flags >> 11) & 0xf;
  const qd = u16(b, 4);
  if (b.length > (opcode === 0 ? MAX_QUERY_BYTES : MAX_RELAY_BYTES)) return reject(RCODE.FORMERR);
  if (opcode === 0 && qd > 1) return reject(RCODE.FORMERR);
  if (qd === 0) return relayed(b, flags, opcode, 0, "", 0, 0, 12, 0);
  // Question name: no compression allowed (nothing precedes it to point at).
  let o = 12;
  let name = "";
  for (;;) {
    if (o >= b.length) return reject(RCODE.FORMERR);
    const len = b[o++];
    if (len === 0) break;
    if (len > 63 || o + len > b.length) return reject(RCODE.FORMERR);
    if (name.length) name += ".";
    for (let i = 0; i < len; i++) {
      let c = b[o + i];
      if (c >= 0x41 && c <= 0x5a) c += 0x20;
      if (c <= 0x20 || c >= 0x7f || c === 0x2e || c === 0x5c) {
        name += "\\" + String(c).padStart(3, "0");
      } else name += String.fromCharCode(c);
    }
    o += len;
    if (o - 12 > 255) return reject(RCODE.FORMERR);
  }
  const nameLen = o - 12;
  if (o + 4 > b.length) return reject(RCODE.FORMERR);
  const qtype = u16(b, o);
  const qclass = u16(b, o + 2);
  o += 4;
  const questionEnd = o;
  if (opcode !== 0) return relayed(b, flags, opcode, qd, name, qtype, qclass, questionEnd, nameLen);
  const rrs = u16(b, 6) + u16(b, 8) + u16(b, 10);
  const arStart = u16(b, 6) + u16(b, 8);
  let edns: Edns | undefined;
  for (let i = 0; i < rrs; i++) {
    const nameStart = o;
    o = skipName(b, o);
    if (o < 0 || o + 10 > b.length) return reject(RCODE.FORMERR, questionEnd);
    const type = u16(b, o);
    const rdlen = u16(b, o + 8);
    if (type === TYPE.OPT) {
      if (i < arStart || edns || o !== nameStart + 1) return reject(RCODE.FORMERR, questionEnd);
      edns = ednsAt(b, o);
    }
    o += 10 + rdlen;
    if (o > b.length) return reject(RCODE.FORMERR, questionEnd);
  }
  if (o !== b.length) return reject(RCODE.FORMERR, questionEnd);
  if (edns && edns.version !== 0) {
    return { reject: { drop: false, rcode: RCODE.BADVERS, questionEnd } };
  }
  return {
    query: { id: u16(b, 0), flags, opcode, qname: name, qtype, qclass, questionEnd, nameLen, edns },
  };
}

function ednsAt(b: Uint8Array, o: number): Edns {
  return { udpSize: u16(b, o + 2), version: b[o + 5], dnssecOk: (b[o + 6] & 0x80) !== 0 };
}

/**
 * A message to relay (see {@link Query.relay}): the rest of it — further questions (names may be
 * compressed there), then every record — is walked to the exact end, so only a well-formed message
 * leaves the responder; at most one OPT, in the additional section. Its contents are not judged.
 */
function relayed(
  b: Uint8Array,
  flags: number,
  opcode: number,
  qd: number,
  qname: string,
  qtype: number,
  qclass: number,
  questionEnd: number,
  nameLen: number,
): Parsed {
  let o = questionEnd;
  for (let i = 1; i < qd; i++) {
    o = skipName(b, o);
    if (o < 0 || o + 4 > b.length) return reject(RCODE.FORMERR, questionEnd);
    o += 4;
  }
  const rrs = u16(b, 6) + u16(b, 8) + u16(b, 10);
  const arStart = u16(b, 6) + u16(b, 8);
  let edns: Edns | undefined;
  for (let i = 0; i < rrs; i++) {
    const nameStart = o;
    o = skipName(b, o);
    if (o < 0 || o + 10 > b.length) return reject(RCODE.FORMERR, questionEnd);
    if (u16(b, o) === TYPE.OPT) {
      if (i < arStart || edns || o !== nameStart + 1) return reject(RCODE.FORMERR, questionEnd);
      edns = ednsAt(b, o);
    }
    o += 10 + u16(b, o + 8);
    if (o > b.length) return reject(RCODE.FORMERR, questionEnd);
  }
  if (o !== b.length) return reject(RCODE.FORMERR, questionEnd);
  // A QUERY without a question is a cookie or keepalive probe only with EDNS (RFC 7873 §5.4).
  if (opcode === 0 && !edns) return reject(RCODE.FORMERR);
  const id = u16(b, 0);
  return {
    query: { id, flags, opcode, qname, qtype, qclass, questionEnd, nameLen, edns, relay: true },
  };
}
