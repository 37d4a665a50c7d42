/**
 * The TCP listener (RFC 7766): 2-byte length-prefixed messages, pipelined — every complete message
 * in the buffer is handled at once and answers are written as they become ready (possibly out of
 * order, matched by ID); a relayed zone transfer's messages are written in order as they arrive.
 * Bounded: connections, in-flight queries per connection, idle timeout. A zero length or a framing
 * error closes the connection.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { DnsMetrics } from "./metrics.ts";
import type { QueryHandler } from "./handler.ts";
import { put16, u16 } from "./wire.ts";

/** TCP limits. */
export interface TcpOptions {
  /** Concurrent connections at most (default 1024); more are closed at once. */
  maxConnections?: number;
  /** Queries in flight per connection before reading pauses (default 64). */
  maxInflight?: number;
  /** Idle connections are closed after this many ms (default 10000). */
  idleMs?: number;
}

/** A listening TCP DNS socket. */
export class TcpServer {
  readonly #listener: Deno.TcpListener;
  readonly #conns = new Set<Deno.TcpConn>();
  readonly #opts: Required<TcpOptions>;
  readonly #done: Promise<void>;

  constructor(
    readonly handler: QueryHandler,
    address: string,
    port: number,
    readonly metrics: DnsMetrics,
    readonly logger: Logger,
    opts: TcpOptions = {},
  ) {
    this.#listener = Deno.listen({ hostname: address, port, transport: "tcp" });
    this.#opts = {
      maxConnections: opts.maxConnections ?? 1024,
      maxInflight: opts.maxInflight ?? 64,
      idleMs: opts.idleMs ?? 10000,
    };
    this.#done = this.#accept();
  }

  /** The bound port. */
  get port(): number {
    return (this.#listener.addr as Deno.NetAddr).port;
  }

  async #accept(): Promise<void> {
    for (;;) {
      let conn: Deno.TcpConn;
      try {
        conn = await this.#listener.accept();
      } catch {
        return; // listener closed
      }
      if (this.#conns.size >= this.#opts.maxConnections) {
        conn.close();
        continue;
      }
      this.#conns.add(conn);
      this.metrics.tcpConnections.set(this.#conns.size);
      this.#serve(conn).catch(() => {}).finally(() => {
        this.#conns.delete(conn);
        this.metrics.tcpConnections.set(this.#conns.size);
        try {
          conn.close();
        } catch { /* already closed */ }
      });
    }
  }

  async #serve(conn: Deno.TcpConn): Promise<void> {
    const source = (conn.remoteAddr as Deno.NetAddr).hostname;
    let writing = Promise.resolve();
    let inflight = 0;
    let wake: (() => void) | undefined;
    const write = (reply: Uint8Array) => {
      const framed = new Uint8Array(reply.length + 2);
      put16(framed, 0, reply.length);
      framed.set(reply, 2);
      writing = writing.then(async () => {
        let w = 0;
        while (w < framed.length) w += await conn.write(framed.subarray(w));
      }).catch(() => {});
    };
    const chunk = new Uint8Array(65538);
    let buf = new Uint8Array(0);
    for (;;) {
      while (inflight >= this.#opts.maxInflight) await new Promise<void>((r) => (wake = r));
      let timer: ReturnType<typeof setTimeout> | undefined;
      const n = await Promise.race([
        conn.read(chunk),
        new Promise<null>((r) => (timer = setTimeout(() => r(null), this.#opts.idleMs))),
      ]).finally(() => clearTimeout(timer));
      if (n === null) break;
      const next = new Uint8Array(buf.length + n);
      next.set(buf);
      next.set(chunk.subarray(0, n), buf.length);
      buf = next;
      let o = 0;
      while (buf.length - o >= 2) {
        const len = u16(buf, o);
        if (len === 0) {
          await writing;
          return;
        }
        if (buf.length - o - 2 < len) break;
        const msg = buf.slice(o + 2, o + 2 + len);
        o += 2 + len;
        const r = this.handler.handle(msg, source, "tcp", write);
        if (r instanceof Promise) {
          inflight++;
          r.then((x) => x && write(x), () => {}).finally(() => {
            inflight--;
            wake?.();
            wake = undefined;
          });
        } else if (r) write(r);
      }
      buf = buf.slice(o);
    }
    // Let in-flight answers finish before the connection closes.
    while (inflight > 0) await new Promise<void>((r) => (wake = r));
    await writing;
  }

  /** Stops accepting and closes open connections. */
  async close(): Promise<void> {
    try {
      this.#listener.close();
    } catch { /* closed */ }
    for (const c of this.#conns) {
      try {
        c.close();
      } catch { /* closed */ }
    }
    await this.#done;
  }
}
