/**
 * Authoritative answers for the mesh domain — pure: bytes in, bytes out, no I/O and no clock.
 * A → the VIPs, AAAA → the IPv6 VIPs, anything else (or no address of that family) → NODATA with the
 * zone's SOA in authority, an unknown name → NXDOMAIN with the SOA. Answer sections are precomputed
 * once per record set (owner = a compression pointer to the question), so a query costs one lookup
 * and one copy.
 * @module
 */
import type { MeshRecords, RecordSet } from "./records.ts";
import { ipv4Bytes, ipv6Bytes } from "./records.ts";
import {
  buildResponse,
  CLASS_IN,
  encodeName,
  normalizeName,
  put16,
  put32,
  type Query,
  RCODE,
  TYPE,
} from "./wire.ts";

/** Zone parameters. */
export interface ZoneOptions {
  /** TTL of A/AAAA answers, seconds (default 5: VIPs change only when a Service does). */
  ttl?: number;
  /** SOA TTL and MINIMUM — the negative-caching TTL clients apply to NXDOMAIN/NODATA (default 5). */
  negativeTtl?: number;
  /** EDNS payload size we advertise (default 1232, the DNS flag day value). */
  ednsSize?: number;
}

interface Precomputed {
  a: Uint8Array;
  aCount: number;
  aaaa: Uint8Array;
  aaaaCount: number;
}

function rrs(addrs: Uint8Array[], type: number, ttl: number): Uint8Array {
  if (!addrs.length) return new Uint8Array(0);
  const len = 12 + addrs[0].length;
  const out = new Uint8Array(addrs.length * len);
  addrs.forEach((ip, i) => {
    const o = i * len;
    put16(out, o, 0xc00c); // owner: pointer to the question name at offset 12
    put16(out, o + 2, type);
    put16(out, o + 4, CLASS_IN);
    put32(out, o + 6, ttl);
    put16(out, o + 10, ip.length);
    out.set(ip, o + 12);
  });
  return out;
}

/** The mesh zone: decides whether a name is ours and answers it. */
export class MeshZone {
  /** Normalized zone apex, e.g. "aether.internal". */
  readonly domain: string;
  readonly ttl: number;
  readonly negativeTtl: number;
  readonly ednsSize: number;
  readonly #suffix: string;
  readonly #soa: Uint8Array;
  readonly #pre = new WeakMap<RecordSet, Precomputed>();

  constructor(meshDomain: string, opts: ZoneOptions = {}) {
    this.domain = normalizeName(meshDomain);
    if (!this.domain) throw new RangeError("meshDomain must not be the root");
    encodeName(this.domain); // validates label and name lengths
    this.#suffix = "." + this.domain;
    this.ttl = opts.ttl ?? 5;
    this.negativeTtl = opts.negativeTtl ?? 5;
    this.ednsSize = opts.ednsSize ?? 1232;
    this.#soa = this.#buildSoa();
  }

  /** True when a normalized name is the apex or lies under it. */
  contains(name: string): boolean {
    return name === this.domain || name.endsWith(this.#suffix);
  }

  #buildSoa(): Uint8Array {
    const owner = encodeName(this.domain);
    const mname = encodeName("ns." + this.domain);
    const rname = encodeName("hostmaster." + this.domain);
    const rdlen = mname.length + rname.length + 20;
    const out = new Uint8Array(owner.length + 10 + rdlen);
    out.set(owner, 0);
    let o = owner.length;
    put16(out, o, TYPE.SOA);
    put16(out, o + 2, CLASS_IN);
    put32(out, o + 4, this.negativeTtl);
    put16(out, o + 8, rdlen);
    o += 10;
    out.set(mname, o);
    o += mname.length;
    out.set(rname, o);
    o += rname.length;
    put32(out, o, 1); // serial
    put32(out, o + 4, 60); // refresh
    put32(out, o + 8, 10); // retry
    put32(out, o + 12, 3600); // expire
    put32(out, o + 16, this.negativeTtl); // minimum: negative TTL (RFC 2308)
    return out;
  }

  #precompute(set: RecordSet): Precomputed {
    let p = this.#pre.get(set);
    if (!p) {
      const a = set.a.map(ipv4Bytes).filter((x): x is Uint8Array => !!x);
      const aaaa = set.aaaa.map(ipv6Bytes).filter((x): x is Uint8Array => !!x);
      p = {
        a: rrs(a, TYPE.A, this.ttl),
        aCount: a.length,
        aaaa: rrs(aaaa, TYPE.AAAA, this.ttl),
        aaaaCount: aaaa.length,
      };
      this.#pre.set(set, p);
    }
    return p;
  }

  /**
   * Answers a query for a name inside the zone. `raw` is the query's bytes (its question is echoed
   * verbatim); `limit` is the payload limit (UDP) — larger answers come back with TC set.
   */
  answer(raw: Uint8Array, q: Query, records: MeshRecords, limit: number): Uint8Array {
    if (q.qclass !== CLASS_IN && q.qclass !== 255) return this.#reply(raw, q, RCODE.REFUSED, limit);
    if (q.qname === this.domain) {
      // The apex exists: SOA answers itself, everything else is NODATA.
      if (q.qtype === TYPE.SOA) return this.#reply(raw, q, RCODE.NOERROR, limit, this.#soa, 1);
      return this.#negative(raw, q, RCODE.NOERROR, limit);
    }
    const set = records.lookup(q.qname);
    if (set === undefined) return this.#negative(raw, q, RCODE.NXDOMAIN, limit);
    const p = this.#precompute(set);
    if (q.qtype === TYPE.A && p.aCount) {
      return this.#reply(raw, q, RCODE.NOERROR, limit, p.a, p.aCount);
    }
    if (q.qtype === TYPE.AAAA && p.aaaaCount) {
      return this.#reply(raw, q, RCODE.NOERROR, limit, p.aaaa, p.aaaaCount);
    }
    return this.#negative(raw, q, RCODE.NOERROR, limit);
  }

  #reply(
    raw: Uint8Array,
    q: Query,
    rcode: number,
    limit: number,
    answers?: Uint8Array,
    ancount = 0,
  ): Uint8Array {
    const aa = rcode !== RCODE.REFUSED;
    return buildResponse(
      raw,
      q.id,
      q.flags,
      q.questionEnd,
      q.edns,
      rcode,
      aa,
      answers,
      ancount,
      undefined,
      0,
      this.ednsSize,
      limit,
    );
  }

  #negative(raw: Uint8Array, q: Query, rcode: number, limit: number): Uint8Array {
    return buildResponse(
      raw,
      q.id,
      q.flags,
      q.questionEnd,
      q.edns,
      rcode,
      true,
      undefined,
      0,
      this.#soa,
      1,
      this.ednsSize,
      limit,
    );
  }
}
