/**
 * The mesh DNS responder: authoritative for `<svc>.<meshDomain>`, a caching forwarder for every
 * other name, on UDP and TCP at one address and port.
 *
 * ```ts
 * const dns = new DnsResponder({ meshDomain: "aether.internal", records, metrics, logger });
 * await dns.listen({ address: "127.0.0.1", port: 18054 });
 * dns.setRecords(recordsFromMesh(resolve(objects, { meshDomain: "aether.internal" }).mesh));
 * await dns.close();
 * ```
 * @module
 */
import type { Registry } from "../../lib/metrics/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { MeshZone, type ZoneOptions, ZoneSet } from "./authority.ts";
import { type CacheOptions, DnsCache } from "./cache.ts";
import { Forwarder, parseUpstream, type Upstream, upstreamsFromResolvConf } from "./forwarder.ts";
import { QueryHandler } from "./handler.ts";
import { DnsMetrics } from "./metrics.ts";
import { RateLimiter, type RateLimitOptions } from "./rate_limit.ts";
import { type MeshRecords, type RecordMap, StaticRecords } from "./records.ts";
import { type TcpOptions, TcpServer } from "./tcp_server.ts";
import { UdpServer } from "./udp_server.ts";
import { type Libc, openLibc } from "./libc.ts";
import { MmsgUdpServer } from "./mmsg_server.ts";

export type { MeshRecords, RecordMap, RecordSet } from "./records.ts";
export { StaticRecords } from "./records.ts";
export {
  CLUSTERSET_DOMAIN,
  meshRecordsSink,
  recordsFromClusterSet,
  recordsFromMesh,
} from "./records_from_mesh.ts";
export type { RateLimitOptions } from "./rate_limit.ts";
export type { CacheOptions } from "./cache.ts";
export type { TcpOptions } from "./tcp_server.ts";
export type { ZoneOptions } from "./authority.ts";
export { parseUpstream, type Upstream, upstreamsFromResolvConf } from "./forwarder.ts";

/** Default listen port of the agent's responder. */
export const DEFAULT_DNS_PORT = 18054;

/** Responder settings. */
export interface DnsResponderOptions {
  /** The mesh domain, e.g. "aether.internal"; names under it are answered authoritatively. */
  meshDomain: string;
  /** More zones answered from the records alike (`clusterset.local` in a clusterset). */
  extraZones?: string[];
  /** Initial records (a live `MeshRecords` or a plain map; replace later with `setRecords`). */
  records?: MeshRecords | RecordMap;
  /**
   * Upstreams as "ip", "ip:port" or "[v6]:port". Default: the `nameserver` lines of
   * `resolvConfPath` (minus the responder's own address).
   */
  upstreams?: string[];
  /** resolv.conf read when `upstreams` is not given (default /etc/resolv.conf). */
  resolvConfPath?: string;
  /** Per-upstream timeout in ms (default 2000). */
  forwardTimeoutMs?: number;
  metrics: Registry;
  logger: Logger;
  /** Milliseconds clock used by the cache and the rate limiter (default Date.now). */
  now?: () => number;
  rateLimit?: RateLimitOptions;
  cache?: Omit<CacheOptions, "now">;
  zone?: ZoneOptions;
  tcp?: TcpOptions;
  /**
   * UDP path: "batched" (default; recvmmsg/sendmmsg through libc, falling back to "plain" when FFI
   * is unavailable or the batched loop fails) or "plain" (node:dgram, one event per datagram).
   */
  udp?: "batched" | "plain";
  /** libc bindings for the batched path (default: `openLibc()`; tests inject faults). */
  libc?: () => Libc;
}

/** Where to listen. Never a wildcard unless asked for explicitly. */
export interface ListenOptions {
  /** Default 127.0.0.1. */
  address?: string;
  /** Default 18054; 0 picks a free port (UDP first, then TCP on the same number). */
  port?: number;
}

function isRecords(r: MeshRecords | RecordMap): r is MeshRecords {
  return !(r instanceof Map) && typeof (r as MeshRecords).lookup === "function";
}

/** The mesh DNS responder. */
export class DnsResponder {
  readonly zone: ZoneSet;
  readonly metrics: DnsMetrics;
  readonly handler: QueryHandler;
  readonly forwarder: Forwarder;
  readonly cache: DnsCache;
  #records: MeshRecords;
  #explicitUpstreams: boolean;
  #opts: DnsResponderOptions;
  #closing = false;
  #udp?: { port: number; close(): Promise<void> };
  #libc?: Libc;
  /** Which UDP path is serving: "batched", "plain", or undefined before listen. */
  udpPath?: "batched" | "plain";
  #tcp?: TcpServer;

  constructor(opts: DnsResponderOptions) {
    this.#opts = opts;
    const now = opts.now ?? Date.now;
    this.zone = new ZoneSet(
      [opts.meshDomain, ...(opts.extraZones ?? [])].map((d) => new MeshZone(d, opts.zone)),
    );
    this.metrics = new DnsMetrics(opts.metrics);
    this.#records = opts.records === undefined
      ? new StaticRecords()
      : isRecords(opts.records)
      ? opts.records
      : new StaticRecords(opts.records);
    this.#explicitUpstreams = opts.upstreams !== undefined;
    this.cache = new DnsCache({ ...opts.cache, now });
    this.forwarder = new Forwarder({
      upstreams: (opts.upstreams ?? []).map(parseUpstream),
      timeoutMs: opts.forwardTimeoutMs,
      onAttempt: (_u, seconds, result, transport) =>
        this.metrics.forwardSeconds.observe(seconds, { result, transport }),
    });
    this.handler = new QueryHandler({
      zone: this.zone,
      records: () => this.#records,
      forwarder: this.forwarder,
      cache: this.cache,
      limiter: new RateLimiter(opts.rateLimit, now),
      metrics: this.metrics,
      logger: opts.logger,
    });
  }

  /** Replaces the mesh records; the next query sees them. */
  setRecords(records: MeshRecords | RecordMap): void {
    this.#records = isRecords(records) ? records : new StaticRecords(records);
  }

  /** The upstreams in use. */
  get upstreams(): Upstream[] {
    return this.forwarder.upstreams;
  }

  /** Binds UDP and TCP on the same address and port; returns the bound port. */
  async listen(opts: ListenOptions = {}): Promise<{ address: string; port: number }> {
    const address = opts.address ?? "127.0.0.1";
    const log = this.#opts.logger;
    this.metrics.start();
    const port = opts.port ?? DEFAULT_DNS_PORT;
    // With port 0 the kernel picks a free UDP port, whose number may already be taken on TCP:
    // then try another one (a few times) instead of failing.
    for (let attempt = 1;; attempt++) {
      this.#udp = await this.#listenUdp(address, port);
      try {
        this.#tcp = new TcpServer(
          this.handler,
          address,
          this.#udp.port,
          this.metrics,
          log,
          this.#opts.tcp,
        );
        break;
      } catch (e) {
        await this.#udp.close();
        if (port !== 0 || !(e instanceof Deno.errors.AddrInUse) || attempt >= 10) throw e;
      }
    }
    if (!this.#explicitUpstreams) {
      // Only the responder itself (this address AND port) is a loop: a resolver on :53 of the
      // same host is a real upstream.
      const path = this.#opts.resolvConfPath ?? "/etc/resolv.conf";
      const text = await Deno.readTextFile(path).catch(() => "");
      this.forwarder.upstreams = upstreamsFromResolvConf(text, [{
        host: address,
        port: this.#udp.port,
      }]);
      if (!this.forwarder.upstreams.length) {
        log.warn("no upstream resolvers: non-mesh names will get SERVFAIL", { path });
      }
    }
    log.info("dns responder listening", {
      address,
      port: this.#udp.port,
      zones: this.zone.zones.map((z) => z.domain),
      upstreams: this.forwarder.upstreams.map((u) => `${u.host}:${u.port}`),
    });
    return { address, port: this.#udp.port };
  }

  /** The batched UDP socket where possible, else the plain one. */
  async #listenUdp(
    address: string,
    port: number,
  ): Promise<{ port: number; close(): Promise<void> }> {
    const log = this.#opts.logger;
    if (this.#opts.udp !== "plain") {
      try {
        this.#libc ??= (this.#opts.libc ?? openLibc)();
        const server = MmsgUdpServer.listen(this.#libc, this.handler, address, port, log, (e) => {
          // The loop died (its socket is closed): answer on the plain path, same port.
          this.metrics.udpFallbacks.inc();
          log.error("dns batched udp loop failed; answering on the plain udp path", {
            error: e.message,
          });
          this.udpPath = "plain";
          this.#udp = undefined;
          UdpServer.listen(this.handler, address, server.port, log).then((plain) => {
            if (this.#closing) return plain.close();
            this.#udp = plain;
          }, (err) => log.error("dns udp fallback failed to bind", { error: String(err) }));
        });
        this.udpPath = "batched";
        return server;
      } catch (e) {
        if (e instanceof Deno.errors.AddrInUse) throw e;
        log.warn("dns batched udp unavailable; using the plain udp path", {
          error: (e as Error).message,
        });
      }
    }
    this.udpPath = "plain";
    return await UdpServer.listen(this.handler, address, port, log);
  }

  /** Stops both listeners. */
  async close(): Promise<void> {
    this.#closing = true;
    await Promise.all([this.#udp?.close(), this.#tcp?.close()]);
    this.metrics.stop();
    this.#udp = undefined;
    this.#tcp = undefined;
  }
}
export { ipv4Bytes } from "./records.ts";
