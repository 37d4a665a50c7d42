/**
 * One query in, one answer (or nothing) out — the transport-independent core shared by the UDP and
 * TCP servers: rate limit → strict parse → mesh zone (synchronous, precomputed) or cache → forward
 * (identical in-flight queries share one upstream exchange) → size fit → metrics. What the
 * responder does not own is relayed upstream as received and answered as the upstream answers:
 * every opcode but QUERY (UPDATE, NOTIFY, …) and zone transfers outside the mesh zone — never
 * cached, never shared, over the client's transport (a transfer over TCP streamed message by
 * message).
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { Zone } from "./authority.ts";
import type { DnsCache } from "./cache.ts";
import { cacheKey } from "./cache.ts";
import type { Forwarder } from "./forwarder.ts";
import type { DnsMetrics } from "./metrics.ts";
import type { RateLimiter } from "./rate_limit.ts";
import type { MeshRecords } from "./records.ts";
import { TransferTracker } from "./transfer.ts";
import { type Edns, OPCODE, parseQuery, put16, type Query, RCODE, TYPE } from "./wire.ts";
import {
  errorResponse,
  fitUdp,
  opcodeLabel,
  rcodeLabel,
  truncatedResponse,
  udpLimit,
} from "./wire_answer.ts";

/** The transport a query arrived on. */
export type Transport = "udp" | "tcp";

/** Everything the handler reads. */
export interface HandlerDeps {
  zone: Zone;
  /** The current records (read per query, so an update is visible to the next query). */
  records: () => MeshRecords;
  forwarder: Forwarder;
  cache: DnsCache;
  limiter: RateLimiter;
  metrics: DnsMetrics;
  logger: Logger;
}

/** An answer now, an answer later, or no answer (drop). */
export type Reply = Uint8Array | undefined | Promise<Uint8Array | undefined>;

const BADVERS_EDNS: Edns = { udpSize: 512, version: 0, dnssecOk: false };

/** Copies a reply for another client of the same question: their ID and question bytes. */
function rewrap(reply: Uint8Array, q: Query, raw: Uint8Array): Uint8Array {
  const out = reply.slice();
  put16(out, 0, q.id);
  if (out.length >= q.questionEnd) out.set(raw.subarray(12, q.questionEnd), 12);
  return out;
}

/** The transport-independent query handler. */
export class QueryHandler {
  readonly #d: HandlerDeps;
  readonly #inflight = new Map<string, Promise<Uint8Array | undefined>>();

  constructor(deps: HandlerDeps) {
    this.#d = deps;
  }

  /**
   * Handles one message from `source` (an IP address string). Never throws. `stream` (TCP) takes
   * the messages of a multi-message answer (a relayed zone transfer) before the last, which is the
   * reply.
   */
  handle(
    raw: Uint8Array,
    source: string,
    transport: Transport,
    stream?: (reply: Uint8Array) => void,
  ): Reply {
    const d = this.#d;
    try {
      const verdict = d.limiter.check(source);
      if (verdict !== "allow") return this.#limited(raw, transport, verdict);
      const parsed = parseQuery(raw);
      if (parsed.reject) {
        const r = parsed.reject;
        if (r.drop) {
          d.metrics.dropped.inc({
            reason: raw.length >= 4 && raw[2] & 0x80 ? "response" : "malformed",
          });
          return undefined;
        }
        d.metrics.answered(0, r.rcode, "error");
        const edns = r.rcode === RCODE.BADVERS ? BADVERS_EDNS : undefined;
        return errorResponse(raw, r.rcode, r.questionEnd, edns, d.zone.ednsSize);
      }
      const q = parsed.query;
      if (q.relay) return this.#relay(raw, q, transport);
      const limit = transport === "udp" ? udpLimit(q.edns, d.zone.ednsSize) : 65535;
      if (q.qtype === TYPE.AXFR || q.qtype === TYPE.IXFR) {
        if (!d.zone.contains(q.qname)) return this.#transfer(raw, q, transport, stream);
        d.metrics.answered(q.qtype, RCODE.REFUSED, "error");
        return errorResponse(raw, RCODE.REFUSED, q.questionEnd, q.edns, d.zone.ednsSize);
      }
      if (d.zone.contains(q.qname)) {
        const resp = d.zone.answer(raw, q, d.records(), limit);
        this.#count(q, resp, "mesh");
        return resp;
      }
      const hit = d.cache.get(q, raw);
      if (hit) {
        d.metrics.cacheHits.inc();
        const out = transport === "udp" ? fitUdp(hit, q, raw, limit, d.zone.ednsSize) : hit;
        this.#count(q, out, "cache");
        return out;
      }
      d.metrics.cacheMisses.inc();
      return this.#forward(raw, q, limit, transport);
    } catch (e) {
      d.logger.error("dns handler failed", { error: String(e) });
      return undefined;
    }
  }

  #count(q: Query, resp: Uint8Array, source: "mesh" | "cache" | "forward" | "error") {
    this.#d.metrics.answered(q.qtype, resp[3] & 0xf, source);
    if (resp[2] & 0x02) this.#d.metrics.truncated.inc();
  }

  #limited(raw: Uint8Array, transport: Transport, verdict: "drop" | "slip"): Reply {
    const d = this.#d;
    if (transport === "tcp") {
      d.metrics.rateLimited.inc({ action: "refused" });
      const p = parseQuery(raw);
      return p.query
        ? errorResponse(raw, RCODE.REFUSED, p.query.questionEnd, p.query.edns, 0)
        : undefined;
    }
    d.metrics.rateLimited.inc({ action: verdict });
    if (verdict === "drop") return undefined;
    const p = parseQuery(raw);
    if (!p.query) return undefined;
    return truncatedResponse(raw, p.query, RCODE.NOERROR, d.zone.ednsSize);
  }

  /**
   * Another opcode than QUERY, or a query without a question: relayed, unless it names the mesh
   * zone, which is ours and read-only — UPDATE and NOTIFY there are REFUSED, other opcodes NOTIMP.
   */
  #relay(raw: Uint8Array, q: Query, transport: Transport): Reply {
    const d = this.#d;
    const opcode = opcodeLabel(q.opcode);
    if (q.questionEnd > 12 && d.zone.contains(q.qname)) {
      const own = q.opcode === OPCODE.UPDATE || q.opcode === OPCODE.NOTIFY;
      const rcode = own ? RCODE.REFUSED : RCODE.NOTIMP;
      d.metrics.relayed.inc({ opcode, rcode: rcodeLabel(rcode) }); // counted, though not relayed
      return errorResponse(raw, rcode, q.questionEnd, q.edns, d.zone.ednsSize);
    }
    return d.forwarder.relay(raw, q.questionEnd, transport).then((reply) => {
      const out = reply ??
        errorResponse(raw, RCODE.SERVFAIL, q.questionEnd, q.edns, d.zone.ednsSize);
      d.metrics.relayed.inc({ opcode, rcode: rcodeLabel(out[3] & 0xf) });
      d.logger.debug("dns message relayed", {
        opcode,
        name: q.qname,
        transport,
        rcode: rcodeLabel(out[3] & 0xf),
        ...(reply ? {} : { upstream: "none answered" }),
      });
      return out;
    });
  }

  /**
   * A zone transfer outside the mesh zone: relayed, never cached; over TCP its answer is streamed
   * through `stream` until the closing SOA.
   */
  async #transfer(
    raw: Uint8Array,
    q: Query,
    transport: Transport,
    stream?: (reply: Uint8Array) => void,
  ): Promise<Uint8Array | undefined> {
    const d = this.#d;
    const tracker = new TransferTracker(raw, q.qtype);
    let parts = 0;
    const reply = await d.forwarder.relay(
      raw,
      q.questionEnd,
      transport,
      transport === "tcp" && stream
        ? {
          last: (m) => tracker.last(m),
          part: (m) => {
            parts++;
            stream(m);
          },
        }
        : undefined,
    );
    if (reply) {
      this.#count(q, reply, "forward");
      return reply;
    }
    if (parts) {
      d.logger.warn("dns zone transfer broken off by the upstream", { name: q.qname, parts });
      return undefined;
    }
    d.metrics.answered(q.qtype, RCODE.SERVFAIL, "forward");
    return errorResponse(raw, RCODE.SERVFAIL, q.questionEnd, q.edns, d.zone.ednsSize);
  }

  async #forward(raw: Uint8Array, q: Query, limit: number, transport: Transport) {
    const d = this.#d;
    const key = cacheKey(q);
    let p = this.#inflight.get(key);
    const leader = !p;
    if (!p) {
      p = d.forwarder.forward(raw, q.questionEnd).then((reply) => {
        if (reply) {
          d.cache.store(q, reply);
          d.metrics.cacheEntries.set(d.cache.size);
        }
        return reply;
      }).finally(() => this.#inflight.delete(key));
      this.#inflight.set(key, p);
    }
    let reply = await p;
    if (!reply) {
      d.metrics.answered(q.qtype, RCODE.SERVFAIL, "forward");
      return errorResponse(raw, RCODE.SERVFAIL, q.questionEnd, q.edns, d.zone.ednsSize);
    }
    if (!leader) reply = rewrap(reply, q, raw);
    const out = transport === "udp" ? fitUdp(reply, q, raw, limit, d.zone.ednsSize) : reply;
    this.#count(q, out, "forward");
    return out;
  }
}
