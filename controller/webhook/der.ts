/**
 * ASN.1 DER, the little the webhook's certificates need (X.690): writers for the universal types
 * an X.509 certificate is made of, and a reader that walks one TLV at a time. Pure.
 * @module
 */

/** Bytes on an ArrayBuffer (what WebCrypto accepts). */
export type Bytes = Uint8Array<ArrayBuffer>;

/** Bytes of all `parts`, in order. */
export function concat(parts: readonly Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}

/** One tag-length-value with a definite length (short form below 128 bytes). */
export function tlv(tag: number, content: Uint8Array): Bytes {
  const n = content.length;
  const len: number[] = [];
  if (n < 0x80) len.push(n);
  else {
    const bytes: number[] = [];
    for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
    len.push(0x80 | bytes.length, ...bytes);
  }
  return concat([new Uint8Array([tag, ...len]), content]);
}

/** SEQUENCE of `parts`. */
export const seq = (...parts: Uint8Array[]): Bytes => tlv(0x30, concat(parts));
/** SET of `parts` (one element here, so no sorting is needed). */
export const set = (...parts: Uint8Array[]): Bytes => tlv(0x31, concat(parts));
/** [n] EXPLICIT, constructed context tag around `content`. */
export const explicit = (n: number, content: Uint8Array): Bytes => tlv(0xa0 | n, content);
/** [n] IMPLICIT primitive context tag (a GeneralName's dNSName [2], iPAddress [7]). */
export const implicit = (n: number, content: Uint8Array): Bytes => tlv(0x80 | n, content);
/** OCTET STRING. */
export const octets = (b: Uint8Array): Bytes => tlv(0x04, b);
/** BOOLEAN TRUE. */
export const TRUE: Bytes = tlv(0x01, new Uint8Array([0xff]));
/** NULL. */
export const NULL: Bytes = tlv(0x05, new Uint8Array(0));
/** UTF8String. */
export const utf8 = (s: string): Bytes => tlv(0x0c, new TextEncoder().encode(s));

/** BIT STRING of whole bytes, or with `unused` trailing bits of the last byte unused. */
export function bits(b: Uint8Array, unused = 0): Bytes {
  return tlv(0x03, concat([new Uint8Array([unused]), b]));
}

/** A non-negative INTEGER from big-endian magnitude bytes (minimal, sign byte when needed). */
export function unsigned(b: Uint8Array): Bytes {
  let i = 0;
  while (i < b.length - 1 && b[i] === 0) i++;
  const body = b.subarray(i);
  return tlv(0x02, body[0] & 0x80 ? concat([new Uint8Array([0]), body]) : body);
}

/** A small non-negative INTEGER. */
export function int(n: number): Bytes {
  const bytes: number[] = [];
  for (let v = n; v > 0 || !bytes.length; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return unsigned(new Uint8Array(bytes));
}

/** OBJECT IDENTIFIER from its dotted form. */
export function oid(dotted: string): Bytes {
  const arcs = dotted.split(".").map(Number);
  const out = [40 * arcs[0] + arcs[1]];
  for (const arc of arcs.slice(2)) {
    const septets: number[] = [];
    for (let v = arc; v > 0 || !septets.length; v = Math.floor(v / 128)) septets.unshift(v & 0x7f);
    out.push(...septets.map((s, i) => (i < septets.length - 1 ? s | 0x80 : s)));
  }
  return tlv(0x06, new Uint8Array(out));
}

/** UTCTime up to 2049, GeneralizedTime from 2050 on (RFC 5280 §4.1.2.5), to the second. */
export function time(ms: number): Bytes {
  const iso = new Date(Math.floor(ms / 1000) * 1000).toISOString(); // YYYY-MM-DDTHH:MM:SS.000Z
  const digits = iso.slice(0, 19).replace(/[-:T]/g, "") + "Z";
  const year = Number(iso.slice(0, 4));
  return year < 2050
    ? tlv(0x17, new TextEncoder().encode(digits.slice(2)))
    : tlv(0x18, new TextEncoder().encode(digits));
}

/** One TLV read at `at`: its tag, where its content starts and where it ends. */
export interface Tlv {
  tag: number;
  at: number;
  start: number;
  end: number;
}

/** Reads the TLV at `at` (definite lengths only); throws on a truncated one. */
export function readTlv(b: Uint8Array, at: number): Tlv {
  if (at + 2 > b.length) throw new Error(`DER: truncated at byte ${at}`);
  const tag = b[at];
  let len = b[at + 1];
  let start = at + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    if (n === 0 || n > 4) throw new Error(`DER: unsupported length at byte ${at}`);
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + b[start + i];
    start += n;
  }
  if (start + len > b.length) throw new Error(`DER: truncated at byte ${at}`);
  return { tag, at, start, end: start + len };
}

/** The TLVs directly inside the constructed TLV `outer`. */
export function children(b: Uint8Array, outer: Tlv): Tlv[] {
  const out: Tlv[] = [];
  for (let at = outer.start; at < outer.end;) {
    const t = readTlv(b, at);
    out.push(t);
    at = t.end;
  }
  return out;
}

/** A time TLV (UTCTime or GeneralizedTime, `Z` form) as ms since the epoch. */
export function readTime(b: Uint8Array, t: Tlv): number {
  let s = new TextDecoder().decode(b.subarray(t.start, t.end));
  if (t.tag === 0x17) s = (Number(s.slice(0, 2)) < 50 ? "20" : "19") + s;
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})Z$/.exec(s);
  if (!m) throw new Error(`DER: unsupported time ${s}`);
  return Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
}
