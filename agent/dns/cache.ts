/**
 * A response cache for forwarded names. It stores the upstream's bytes plus the offsets of every
 * TTL field; a hit copies the bytes, patches the ID, echoes the client's question (same length,
 * possibly different case) and counts TTLs down. Positive TTL = the smallest RR TTL; negative
 * answers (NXDOMAIN, NODATA) live for min(SOA TTL, SOA MINIMUM) (RFC 2308) and are not cached
 * without an SOA. SERVFAIL and truncated responses are never cached. LRU-bounded.
 * @module
 */
import { put16, put32, type Query, RCODE, skipName, TYPE, u16 } from "./wire.ts";

/** Cache limits. */
export interface CacheOptions {
  /** Entries kept at most (LRU eviction), default 10000. */
  maxEntries?: number;
  /** Cap on positive TTLs, seconds (default 3600). */
  maxTtl?: number;
  /** Cap on negative TTLs, seconds (default 300). */
  maxNegativeTtl?: number;
  /** Milliseconds clock (injected in tests). */
  now?: () => number;
}

interface Entry {
  bytes: Uint8Array;
  ttlOffsets: number[];
  ttls: number[];
  stored: number;
  expires: number;
}

function u32(b: Uint8Array, o: number): number {
  return ((b[o] << 24) >>> 0) + (b[o + 1] << 16) + (b[o + 2] << 8) + b[o + 3];
}

/** The cache key of a query: name, type, class, whether it has EDNS and DO/CD bits. */
export function cacheKey(q: Query): string {
  const e = q.edns ? (q.edns.dnssecOk ? 2 : 1) : 0;
  return `${q.qname}|${q.qtype}|${q.qclass}|${e}|${(q.flags >> 4) & 1}`;
}

interface Scan {
  ttlOffsets: number[];
  ttls: number[];
  soaTtl: number | undefined;
  /** Length to keep: the message with the trailing OPT's options stripped. */
  keep: number;
}

/** Walks a response once: TTL offsets, the SOA's negative TTL, and where OPT options start. */
function scan(b: Uint8Array, questionEnd: number): Scan | undefined {
  const counts = [u16(b, 6), u16(b, 8), u16(b, 10)];
  const total = counts[0] + counts[1] + counts[2];
  let o = questionEnd;
  const ttlOffsets: number[] = [];
  const ttls: number[] = [];
  let soaTtl: number | undefined;
  let keep = b.length;
  for (let i = 0; i < total; i++) {
    o = skipName(b, o);
    if (o < 0 || o + 10 > b.length) return undefined;
    const type = u16(b, o);
    const rdlen = u16(b, o + 8);
    const end = o + 10 + rdlen;
    if (end > b.length) return undefined;
    if (type === TYPE.OPT) {
      if (end !== b.length) return undefined; // OPT not last: leave it uncached
      keep = o + 10; // strip options (cookies belong to the first client)
    } else {
      ttlOffsets.push(o + 4);
      ttls.push(u32(b, o + 4));
      if (type === TYPE.SOA && i >= counts[0] && i < counts[0] + counts[1] && rdlen >= 22) {
        soaTtl = Math.min(u32(b, o + 4), u32(b, end - 4));
      }
    }
    o = end;
  }
  return { ttlOffsets, ttls, soaTtl, keep };
}

/** TTL-honouring LRU cache of upstream responses. */
export class DnsCache {
  readonly #map = new Map<string, Entry>();
  readonly #max: number;
  readonly #maxTtl: number;
  readonly #maxNeg: number;
  readonly #now: () => number;

  constructor(opts: CacheOptions = {}) {
    this.#max = opts.maxEntries ?? 10000;
    this.#maxTtl = opts.maxTtl ?? 3600;
    this.#maxNeg = opts.maxNegativeTtl ?? 300;
    this.#now = opts.now ?? Date.now;
  }

  /** Entries currently held (expired ones included until touched). */
  get size(): number {
    return this.#map.size;
  }

  /** Stores an upstream response for a query when it is cacheable; returns whether it was. */
  store(q: Query, resp: Uint8Array): boolean {
    if (this.#max <= 0 || resp.length < q.questionEnd) return false;
    const flags = u16(resp, 2);
    if (flags & 0x0200) return false; // TC
    const rcode = flags & 0xf;
    if (rcode !== RCODE.NOERROR && rcode !== RCODE.NXDOMAIN) return false;
    const s = scan(resp, q.questionEnd);
    if (!s) return false;
    const negative = rcode === RCODE.NXDOMAIN || u16(resp, 6) === 0;
    let ttl: number;
    if (negative) {
      if (s.soaTtl === undefined) return false;
      ttl = Math.min(s.soaTtl, this.#maxNeg);
    } else {
      ttl = Math.min(this.#maxTtl, ...s.ttls);
    }
    if (ttl <= 0) return false;
    const bytes = resp.slice(0, s.keep);
    if (s.keep !== resp.length) put16(bytes, s.keep - 2, 0); // OPT rdlen = 0
    const now = this.#now();
    const key = cacheKey(q);
    this.#map.delete(key);
    this.#map.set(key, {
      bytes,
      ttlOffsets: s.ttlOffsets,
      ttls: s.ttls,
      stored: now,
      expires: now + ttl * 1000,
    });
    while (this.#map.size > this.#max) this.#map.delete(this.#map.keys().next().value!);
    return true;
  }

  /** A cached answer for this query (ID, question and TTLs adjusted), or undefined. */
  get(q: Query, raw: Uint8Array): Uint8Array | undefined {
    const key = cacheKey(q);
    const e = this.#map.get(key);
    if (!e) return undefined;
    const now = this.#now();
    if (now >= e.expires) {
      this.#map.delete(key);
      return undefined;
    }
    this.#map.delete(key);
    this.#map.set(key, e);
    const out = e.bytes.slice();
    put16(out, 0, q.id);
    // Echo the client's RD/CD bits; keep the upstream's other flags and rcode.
    out[2] = (out[2] & ~0x01) | ((q.flags >> 8) & 0x01);
    out.set(raw.subarray(12, q.questionEnd), 12);
    const elapsed = Math.floor((now - e.stored) / 1000);
    for (let i = 0; i < e.ttlOffsets.length; i++) {
      put32(out, e.ttlOffsets[i], Math.max(0, e.ttls[i] - elapsed));
    }
    return out;
  }

  /** Drops everything. */
  clear(): void {
    this.#map.clear();
  }
}
