/**
 * DNS response builders on raw bytes: answers carved from a slab, the OPT record, error answers,
 * UDP truncation, name encoding and the metric labels of types, opcodes and rcodes.
 * @module
 */
import {
  type Edns,
  FLAG,
  OPCODE,
  put16,
  type Query,
  RCODE,
  TYPE,
  u16,
  UDP_LIMIT_NO_EDNS,
} from "./wire.ts";

const SLAB = 256 * 1024;
let slab = new ArrayBuffer(SLAB);
let slabOff = 0;

/**
 * A zeroed byte array for an answer, carved from a shared slab with a bump pointer. Small typed
 * arrays with their own ArrayBuffer cost ~0.7 µs each in V8 (off-heap backing store); a view into
 * a slab costs a tenth of that. Slabs are never reused — a full one is left to the GC once every
 * view into it is gone — so an answer still queued for sending is never overwritten.
 */
export function alloc(n: number): Uint8Array {
  if (n > 4096) return new Uint8Array(n);
  if (slabOff + n > SLAB) {
    slab = new ArrayBuffer(SLAB);
    slabOff = 0;
  }
  const out = new Uint8Array(slab, slabOff, n);
  slabOff += (n + 7) & ~7;
  return out;
}

/** Size of the OPT record the responder appends. */
export const OPT_LEN = 11;

/** Writes our OPT record (advertised size, extended rcode high bits, DO echoed) at `o`. */
export function writeOpt(b: Uint8Array, o: number, udpSize: number, rcode: number, doBit: boolean) {
  b[o] = 0;
  put16(b, o + 1, TYPE.OPT);
  put16(b, o + 3, udpSize);
  b[o + 5] = (rcode >> 4) & 0xff;
  b[o + 6] = 0;
  b[o + 7] = doBit ? 0x80 : 0;
  b[o + 8] = 0;
  put16(b, o + 9, 0);
}

/** Response flags word for a query's flags (RD and CD copied, RA set) and an rcode. */
export function responseFlags(queryFlags: number, rcode: number, aa: boolean, tc = false): number {
  return FLAG.QR | (queryFlags & (FLAG.RD | FLAG.CD | 0x7800)) | FLAG.RA | (aa ? FLAG.AA : 0) |
    (tc ? FLAG.TC : 0) | (rcode & 0xf);
}

/**
 * Builds a response that echoes the question bytes `raw[12..questionEnd)` exactly (so the case the
 * client sent is preserved) and truncates to `limit` (header + question + OPT, TC set) when the
 * full answer would not fit. `additional` records go before our OPT. `ednsSize` is our advertised size; the OPT is added only when the
 * query had one. Positional arguments: this runs once per query.
 */
export function buildResponse(
  raw: Uint8Array,
  id: number,
  queryFlags: number,
  questionEnd: number,
  edns: Edns | undefined,
  rcode: number,
  aa: boolean,
  answers: Uint8Array | undefined,
  ancount: number,
  authority: Uint8Array | undefined,
  nscount: number,
  ednsSize: number,
  limit: number,
  additional?: Uint8Array,
  arcount = 0,
): Uint8Array {
  const an = answers === undefined ? 0 : answers.length;
  const ns = authority === undefined ? 0 : authority.length;
  const ar = additional === undefined ? 0 : additional.length;
  const opt = edns === undefined ? 0 : OPT_LEN;
  let size = questionEnd + an + ns + ar + opt;
  const tc = size > limit;
  if (tc) size = questionEnd + opt;
  const out = alloc(size);
  put16(out, 0, id);
  put16(out, 2, responseFlags(queryFlags, rcode, aa, tc));
  const hasQ = questionEnd > 12;
  out[5] = hasQ ? 1 : 0;
  if (!tc) {
    put16(out, 6, ancount);
    put16(out, 8, nscount);
  }
  put16(out, 10, (tc ? 0 : arcount) + (opt ? 1 : 0));
  if (hasQ) out.set(raw.subarray(12, questionEnd), 12);
  let o = questionEnd;
  if (!tc) {
    if (answers !== undefined) out.set(answers, o);
    o += an;
    if (authority !== undefined) out.set(authority, o);
    o += ns;
    if (additional !== undefined) out.set(additional, o);
    o += ar;
  }
  if (edns !== undefined) writeOpt(out, o, ednsSize, rcode, edns.dnssecOk);
  return out;
}

/** An error answer (FORMERR, NOTIMP, REFUSED, SERVFAIL, BADVERS) for a query or a rejected packet. */
export function errorResponse(
  raw: Uint8Array,
  rcode: number,
  questionEnd: number,
  edns: Edns | undefined,
  ednsSize: number,
): Uint8Array {
  const id = raw.length >= 2 ? u16(raw, 0) : 0;
  const flags = raw.length >= 4 ? u16(raw, 2) : 0;
  const qe = Math.max(12, questionEnd);
  return buildResponse(
    raw,
    id,
    flags,
    qe,
    edns,
    rcode,
    false,
    undefined,
    0,
    undefined,
    0,
    ednsSize,
    65535,
  );
}

/** The UDP payload limit for a query: 512 without EDNS, else the client's size capped by ours. */
export function udpLimit(edns: Edns | undefined, ourMax: number): number {
  if (!edns) return UDP_LIMIT_NO_EDNS;
  return Math.max(UDP_LIMIT_NO_EDNS, Math.min(edns.udpSize, ourMax));
}

/**
 * Fits an upstream's response into a UDP client's limit: unchanged when it fits, otherwise the
 * header (TC set, counts cleared) + question + our OPT when the client sent EDNS.
 */
export function fitUdp(
  resp: Uint8Array,
  q: Query,
  raw: Uint8Array,
  limit: number,
  ednsSize: number,
): Uint8Array {
  if (resp.length <= limit) return resp;
  const out = truncatedResponse(raw, q, resp[3] & 0xf, ednsSize);
  // Keep the upstream's AA/AD bits as they were; TC is already set by buildResponse.
  out[2] |= resp[2] & 0x04;
  return out;
}

/**
 * The header (TC set, no records) + question + our OPT when the query had one, with `rcode`:
 * what tells a UDP client to ask again over TCP.
 */
export function truncatedResponse(
  raw: Uint8Array,
  q: Query,
  rcode: number,
  ednsSize: number,
): Uint8Array {
  return buildResponse(
    raw,
    q.id,
    q.flags,
    q.questionEnd,
    q.edns,
    rcode,
    false,
    undefined,
    0,
    undefined,
    0,
    ednsSize,
    0,
  );
}

/** Encodes a dotted name (no compression) to wire format. */
export function encodeName(name: string): Uint8Array {
  const labels = name.replace(/\.$/, "").split(".").filter((l) => l.length);
  const parts: number[] = [];
  for (const l of labels) {
    const bytes = new TextEncoder().encode(l);
    if (bytes.length > 63) throw new RangeError(`label too long in ${name}`);
    parts.push(bytes.length, ...bytes);
  }
  parts.push(0);
  if (parts.length > 255) throw new RangeError(`name too long: ${name}`);
  return new Uint8Array(parts);
}

/** Lower-cases a name and drops a trailing dot: the key form of names. */
export function normalizeName(name: string): string {
  return name.toLowerCase().replace(/\.$/, "");
}

/** Query type → mnemonic, frozen (a constant table, not state). */
const typeNames: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(Object.entries(TYPE).map(([k, v]) => [v, k])),
);

/** A bounded metric label for a query type: its mnemonic for common types, else "other". */
export function typeLabel(t: number): string {
  return Object.hasOwn(typeNames, t) ? typeNames[t] : "other";
}

/** A metric label for an opcode: its mnemonic, else OPCODE<n> (at most 16 values). */
export function opcodeLabel(op: number): string {
  return Object.entries(OPCODE).find(([, v]) => v === op)?.[0] ?? `OPCODE${op}`;
}

/** Rcode → mnemonic, frozen (a constant table, not state). */
const rcodeNames: Readonly<Record<number, string>> = Object.freeze(
  Object.fromEntries(Object.entries(RCODE).map(([k, v]) => [v, k])),
);

/** A metric label for an rcode. */
export function rcodeLabel(r: number): string {
  return Object.hasOwn(rcodeNames, r) ? rcodeNames[r] : `RCODE${r}`;
}
