/**
 * Authoritative answers for the mesh domain — pure: bytes in, bytes out, no I/O and no clock.
 * A → the VIPs, AAAA → the IPv6 VIPs, anything else (or no address of that family) → NODATA with the
 * zone's SOA in authority, an unknown name → NXDOMAIN with the SOA. A named service port answers
 * SRV at `_<port>._<proto>.<mesh name>` (target: the mesh name, its addresses in the additional
 * section); `_<proto>.<mesh name>` is then an empty non-terminal (NODATA, not NXDOMAIN: RFC 8020).
 * Answer sections are precomputed once per record set (owner = a compression pointer to the
 * question), so a query costs one lookup and one copy.
 * @module
 */
import type { MeshRecords, RecordSet, SrvPort } from "./records.ts";
import { ipv4Bytes, ipv6Bytes } from "./records.ts";
import { CLASS_IN, put16, put32, type Query, RCODE, TYPE } from "./wire.ts";
import { buildResponse, encodeName, normalizeName } from "./wire_answer.ts";

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

/** Address records; `owner` is a compression pointer (default: the question name at offset 12). */
function rrs(addrs: Uint8Array[], type: number, ttl: number, owner = 0xc00c): Uint8Array {
  if (!addrs.length) return new Uint8Array(0);
  const len = 12 + addrs[0].length;
  const out = new Uint8Array(addrs.length * len);
  addrs.forEach((ip, i) => {
    const o = i * len;
    put16(out, o, owner);
    put16(out, o + 2, type);
    put16(out, o + 4, CLASS_IN);
    put32(out, o + 6, ttl);
    put16(out, o + 10, ip.length);
    out.set(ip, o + 12);
  });
  return out;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
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
    if (set === undefined) return this.#service(raw, q, records, limit);
    const p = this.#precompute(set);
    if (q.qtype === TYPE.A && p.aCount) {
      return this.#reply(raw, q, RCODE.NOERROR, limit, p.a, p.aCount);
    }
    if (q.qtype === TYPE.AAAA && p.aaaaCount) {
      return this.#reply(raw, q, RCODE.NOERROR, limit, p.aaaa, p.aaaaCount);
    }
    if (q.qtype === TYPE.TXT && set.txt?.length) {
      return this.#reply(raw, q, RCODE.NOERROR, limit, this.#txt(set.txt), 1);
    }
    if (q.qtype === TYPE.SRV && set.nameSrv?.length) {
      return this.#nameSrv(raw, q, records, set, limit);
    }
    return this.#negative(raw, q, RCODE.NOERROR, limit);
  }

  /**
   * The SRV records at a name itself (`0 100 <port> <target>.`, targets uncompressed as RFC 2782
   * asks), each target's addresses in the additional section once (owner: a pointer to it).
   */
  #nameSrv(
    raw: Uint8Array,
    q: Query,
    records: MeshRecords,
    set: RecordSet,
    limit: number,
  ): Uint8Array {
    const parts: Uint8Array[] = [], extra: Uint8Array[] = [];
    let at = q.questionEnd, arcount = 0;
    const seen = new Set<string>();
    for (const r of set.nameSrv!) {
      const answer = this.#srvRecord(r.port, r.target);
      const target = normalizeName(r.target);
      const of = target === q.qname ? set : records.lookup(target);
      if (of && !seen.has(target)) {
        seen.add(target);
        const a = of.a.map(ipv4Bytes).filter((x): x is Uint8Array => !!x);
        const aaaa = of.aaaa.map(ipv6Bytes).filter((x): x is Uint8Array => !!x);
        extra.push(rrs(a, TYPE.A, this.ttl, 0xc000 | (at + 18)));
        extra.push(rrs(aaaa, TYPE.AAAA, this.ttl, 0xc000 | (at + 18)));
        arcount += a.length + aaaa.length;
      }
      parts.push(answer);
      at += answer.length;
    }
    return this.#reply(
      raw,
      q,
      RCODE.NOERROR,
      limit,
      concat(parts),
      parts.length,
      concat(extra),
      arcount,
    );
  }

  /** One TXT record of `strings` (owner: a pointer to the question), each cut to 255 bytes. */
  #txt(strings: readonly string[]): Uint8Array {
    const parts = strings.map((t) => new TextEncoder().encode(t).subarray(0, 255));
    const rdlen = parts.reduce((n, b) => n + 1 + b.length, 0);
    const out = new Uint8Array(12 + rdlen);
    put16(out, 0, 0xc00c);
    put16(out, 2, TYPE.TXT);
    put16(out, 4, CLASS_IN);
    put32(out, 6, this.ttl);
    put16(out, 10, rdlen);
    let o = 12;
    for (const b of parts) {
      out[o++] = b.length;
      out.set(b, o);
      o += b.length;
    }
    return out;
  }

  /**
   * A name under the zone that is not a mesh name: `_<port>._<proto>.<mesh name>` of a named port
   * (SRV; other types NODATA), `_<proto>.<mesh name>` above one (NODATA), else NXDOMAIN.
   */
  #service(raw: Uint8Array, q: Query, records: MeshRecords, limit: number): Uint8Array {
    const name = q.qname;
    const dot = name.indexOf(".");
    if (name.charCodeAt(0) !== 0x5f || dot < 0) {
      return this.#negative(raw, q, RCODE.NXDOMAIN, limit);
    }
    const first = name.slice(1, dot), rest = name.slice(dot + 1);
    if (records.lookup(rest)?.srv?.some((p) => p.proto === first)) {
      return this.#negative(raw, q, RCODE.NOERROR, limit); // an empty non-terminal
    }
    const dot2 = rest.indexOf(".");
    if (rest.charCodeAt(0) !== 0x5f || dot2 < 0) {
      return this.#negative(raw, q, RCODE.NXDOMAIN, limit);
    }
    const target = rest.slice(dot2 + 1);
    const set = records.lookup(target);
    const port = set?.srv?.find((p) => p.service === first && p.proto === rest.slice(1, dot2));
    if (!set || !port) return this.#negative(raw, q, RCODE.NXDOMAIN, limit);
    if (q.qtype !== TYPE.SRV && q.qtype !== TYPE.ANY) {
      return this.#negative(raw, q, RCODE.NOERROR, limit);
    }
    const { answer, additional, arcount } = this.#srv(set, port, target, q.questionEnd);
    return this.#reply(raw, q, RCODE.NOERROR, limit, answer, 1, additional, arcount);
  }

  /** One SRV answer `0 100 <port> <target>.`, its owner a pointer to the question's name. */
  #srvRecord(port: number, target: string): Uint8Array {
    const name = encodeName(target);
    const answer = new Uint8Array(18 + name.length);
    put16(answer, 0, 0xc00c);
    put16(answer, 2, TYPE.SRV);
    put16(answer, 4, CLASS_IN);
    put32(answer, 6, this.ttl);
    put16(answer, 10, 6 + name.length);
    put16(answer, 12, 0); // priority
    put16(answer, 14, 100); // weight
    put16(answer, 16, port);
    answer.set(name, 18);
    return answer;
  }

  /** The SRV record `0 100 <port> <target>.` and the target's addresses (owner: a pointer to it). */
  #srv(set: RecordSet, port: SrvPort, target: string, questionEnd: number) {
    const answer = this.#srvRecord(port.port, target);
    const at = 0xc000 | (questionEnd + 18); // the target name inside the SRV record
    const a = set.a.map(ipv4Bytes).filter((x): x is Uint8Array => !!x);
    const aaaa = set.aaaa.map(ipv6Bytes).filter((x): x is Uint8Array => !!x);
    const v4 = rrs(a, TYPE.A, this.ttl, at), v6 = rrs(aaaa, TYPE.AAAA, this.ttl, at);
    const additional = new Uint8Array(v4.length + v6.length);
    additional.set(v4);
    additional.set(v6, v4.length);
    return { answer, additional, arcount: a.length + aaaa.length };
  }

  #reply(
    raw: Uint8Array,
    q: Query,
    rcode: number,
    limit: number,
    answers?: Uint8Array,
    ancount = 0,
    additional?: Uint8Array,
    arcount = 0,
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
      additional,
      arcount,
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

/** What the query handler asks of the zones it answers for. */
export interface Zone {
  /** Normalized apex (of the first zone, for a set). */
  readonly domain: string;
  readonly ednsSize: number;
  contains(name: string): boolean;
  answer(raw: Uint8Array, q: Query, records: MeshRecords, limit: number): Uint8Array;
}

/**
 * Several zones answered alike (the mesh domain, and `clusterset.local` in a clusterset): a name
 * is answered by the zone it lies in, with that zone's SOA in negative answers.
 */
export class ZoneSet implements Zone {
  readonly domain: string;
  readonly ednsSize: number;
  constructor(readonly zones: readonly MeshZone[]) {
    if (zones.length === 0) throw new RangeError("a zone set needs a zone");
    this.domain = zones[0].domain;
    this.ednsSize = zones[0].ednsSize;
  }
  contains(name: string): boolean {
    return this.zones.some((z) => z.contains(name));
  }
  answer(raw: Uint8Array, q: Query, records: MeshRecords, limit: number): Uint8Array {
    // The longest apex first: a zone nested in another answers its own names.
    const zone = [...this.zones].sort((a, b) => b.domain.length - a.domain.length)
      .find((z) => z.contains(q.qname)) ?? this.zones[0];
    return zone.answer(raw, q, records, limit);
  }
}
