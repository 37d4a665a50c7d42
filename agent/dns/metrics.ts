/**
 * The responder's metrics, registered once in the agent's Registry.
 *
 * | name | type | labels |
 * |---|---|---|
 * | `aether_dns_queries_total` | counter | `type` (A, AAAA, MX, …, other), `rcode` (NOERROR, NXDOMAIN, …), `source` (mesh, cache, forward, error) |
 * | `aether_dns_forward_duration_seconds` | histogram | `result` (ok, timeout, error), `transport` (udp, tcp) — one observation per upstream attempt |
 * | `aether_dns_cache_hits_total` / `aether_dns_cache_misses_total` | counter | |
 * | `aether_dns_cache_entries` | gauge | |
 * | `aether_dns_rate_limited_total` | counter | `action` (drop, slip, refused) |
 * | `aether_dns_dropped_total` | counter | `reason` (malformed, response) |
 * | `aether_dns_truncated_total` | counter | |
 * | `aether_dns_tcp_connections` | gauge | |
 * | `aether_dns_relayed_total` | counter | `opcode` (UPDATE, NOTIFY, …), `rcode` — messages relayed upstream as received |
 * @module
 */
import type { Counter, Gauge, Histogram, Registry } from "../../lib/metrics/mod.ts";
import { rcodeLabel, typeLabel } from "./wire_answer.ts";

/** Where an answer came from. */
export type AnswerSource = "mesh" | "cache" | "forward" | "error";

/** Typed handles on the responder's metrics. */
export class DnsMetrics {
  readonly queries: Counter;
  readonly forwardSeconds: Histogram;
  readonly cacheHits: Counter;
  readonly cacheMisses: Counter;
  readonly cacheEntries: Gauge;
  readonly rateLimited: Counter;
  readonly dropped: Counter;
  readonly truncated: Counter;
  readonly tcpConnections: Gauge;
  readonly udpFallbacks: Counter;
  readonly relayed: Counter;
  readonly #labels = new Map<number, Record<string, string>>();
  /** Pending per-series counts, folded into `queries` by `flush()` (the hot path stays cheap). */
  readonly #pending = new Map<number, number>();
  #timer: ReturnType<typeof setInterval> | undefined;

  constructor(reg: Registry) {
    this.queries = reg.counter(
      "aether_dns_queries_total",
      "DNS queries answered, by type and rcode",
    );
    this.forwardSeconds = reg.histogram(
      "aether_dns_forward_duration_seconds",
      "Latency of one forwarded exchange with an upstream",
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    );
    this.cacheHits = reg.counter(
      "aether_dns_cache_hits_total",
      "Forwarded names served from cache",
    );
    this.cacheMisses = reg.counter("aether_dns_cache_misses_total", "Cache lookups that missed");
    this.cacheEntries = reg.gauge("aether_dns_cache_entries", "Responses held in the DNS cache");
    this.rateLimited = reg.counter(
      "aether_dns_rate_limited_total",
      "Queries over the source limit",
    );
    this.dropped = reg.counter("aether_dns_dropped_total", "Packets dropped without an answer");
    this.truncated = reg.counter("aether_dns_truncated_total", "UDP answers sent with TC set");
    this.tcpConnections = reg.gauge("aether_dns_tcp_connections", "Open DNS TCP connections");
    this.udpFallbacks = reg.counter(
      "aether_dns_udp_fallbacks_total",
      "Times the batched UDP loop failed and the plain UDP path took over",
    );
    this.relayed = reg.counter(
      "aether_dns_relayed_total",
      "Messages of another opcode than QUERY (and questionless queries) relayed upstream, by the rcode returned",
    );
  }

  /**
   * Counts one answered query. This is on the hot path, so it only bumps a number; `flush()` (every
   * second while the responder listens, and on close) moves the counts into the registry.
   */
  answered(qtype: number, rcode: number, source: AnswerSource): void {
    const k = qtype * 4096 + (rcode & 0xff) * 4 +
      (source === "mesh" ? 0 : source === "cache" ? 1 : source === "forward" ? 2 : 3);
    let labels = this.#labels.get(k);
    if (!labels) {
      labels = { type: typeLabel(qtype), rcode: rcodeLabel(rcode), source };
      this.#labels.set(k, labels);
    }
    this.#pending.set(k, (this.#pending.get(k) ?? 0) + 1);
  }

  /** Folds pending query counts into `aether_dns_queries_total`; call before rendering. */
  flush(): void {
    for (const [k, n] of this.#pending) this.queries.inc(this.#labels.get(k)!, n);
    this.#pending.clear();
  }

  /** Flushes every `ms` until `stop()` (the timer does not keep the process alive). */
  start(ms = 1000): void {
    if (this.#timer !== undefined) return;
    this.#timer = setInterval(() => this.flush(), ms);
    Deno.unrefTimer(this.#timer as unknown as number);
  }

  /** Stops the flush timer and flushes once more. */
  stop(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.flush();
  }
}
