/**
 * Forwarding to upstream resolvers. Each exchange uses a fresh transaction ID and a fresh UDP
 * source port, both from the crypto RNG; a reply counts only when it comes from the upstream's
 * address and port, carries our ID and echoes our question. A timeout or error moves on to the next
 * upstream. The client's bytes travel unchanged but for the ID (EDNS0 OPT, TSIG and every other
 * record as sent; TSIG carries the original ID for exactly this, RFC 8945 §4.2), and the reply
 * comes back with the client's ID. `forward` (queries the responder caches): a truncated UDP reply
 * is retried over TCP with the same upstream. `relay` (other opcodes, zone transfers): the
 * client's own transport, the reply as the upstream sent it (TC included), over TCP a stream of
 * messages (a zone transfer) passed on one by one.
 * @module
 */
import dgram from "node:dgram";
import type { Buffer } from "node:buffer";
import { put16, u16 } from "./wire.ts";

/** One upstream resolver. */
export interface Upstream {
  host: string;
  port: number;
}

/** How one attempt ended. */
export type AttemptResult = "ok" | "timeout" | "error";

/** Forwarder settings. */
export interface ForwarderOptions {
  upstreams: Upstream[];
  /** Per-upstream, per-transport timeout in ms (default 2000). */
  timeoutMs?: number;
  /** Called once per upstream attempt (metrics). */
  onAttempt?: (
    u: Upstream,
    seconds: number,
    result: AttemptResult,
    transport: "udp" | "tcp",
  ) => void;
  /** Milliseconds clock for latency (default performance.now). */
  now?: () => number;
}

/** Parses "1.2.3.4", "1.2.3.4:5353", "::1", "[::1]:5353". */
export function parseUpstream(s: string): Upstream {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(s);
  if (v6) return { host: v6[1], port: v6[2] ? Number(v6[2]) : 53 };
  if (s.includes(":") && s.indexOf(":") !== s.lastIndexOf(":")) return { host: s, port: 53 };
  const [host, port] = s.split(":");
  if (!host) throw new RangeError(`bad upstream "${s}"`);
  const p = port ? Number(port) : 53;
  if (!Number.isInteger(p) || p < 1 || p > 65535) throw new RangeError(`bad upstream port "${s}"`);
  return { host, port: p };
}

const wildcardHosts = new Set(["0.0.0.0", "::", ""]);

/**
 * Whether a query sent to `upstream` would reach `self` (the responder's own bound address and
 * port): same port, and the same host — or `self` is a wildcard address, which also answers on
 * loopback. A resolver on another port of the same host (dnsmasq on 127.0.0.1:53 beside us on
 * 127.0.0.1:18054) is not a loop.
 */
export function reachesSelf(upstream: Upstream, self: Upstream): boolean {
  if (upstream.port !== self.port) return false;
  if (upstream.host === self.host) return true;
  return wildcardHosts.has(self.host) &&
    (upstream.host.startsWith("127.") || upstream.host === "::1" ||
      wildcardHosts.has(upstream.host));
}

/**
 * The `nameserver` entries of a resolv.conf text (zone ids dropped, port 53), minus those that
 * would reach one of `exclude` (the responder's own address and port, see {@link reachesSelf}).
 */
export function upstreamsFromResolvConf(text: string, exclude: Upstream[] = []): Upstream[] {
  const out: Upstream[] = [];
  for (const line of text.split("\n")) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (!m) continue;
    const upstream = { host: m[1].replace(/%.*$/, ""), port: 53 };
    if (exclude.some((e) => reachesSelf(upstream, e))) continue;
    out.push(upstream);
  }
  return out;
}

/** A uniformly random 16-bit value from the crypto RNG. */
export function randomId(): number {
  return crypto.getRandomValues(new Uint16Array(1))[0];
}

/** A random unprivileged port (1024-65535) from the crypto RNG. */
export function randomPort(): number {
  return 1024 + (crypto.getRandomValues(new Uint32Array(1))[0] % (65536 - 1024));
}

/** True when `resp` holds the question `query[12..questionEnd)` at offset 12 (any case). */
function sameQuestion(resp: Uint8Array, query: Uint8Array, questionEnd: number): boolean {
  if (resp.length < questionEnd) return false;
  for (let i = 12; i < questionEnd; i++) {
    let a = resp[i], b = query[i];
    if (a >= 0x41 && a <= 0x5a) a += 0x20;
    if (b >= 0x41 && b <= 0x5a) b += 0x20;
    if (a !== b) return false;
  }
  return true;
}

/** True when `resp` is a response with this ID whose single question equals ours (any case). */
export function matchesQuery(resp: Uint8Array, query: Uint8Array, questionEnd: number): boolean {
  if (resp.length < questionEnd || !(resp[2] & 0x80)) return false;
  if (u16(resp, 0) !== u16(query, 0) || u16(resp, 4) !== 1) return false;
  return sameQuestion(resp, query, questionEnd);
}

/**
 * The reply to a relayed message: a response with our ID whose first question, when it has one,
 * equals ours. Servers answer an opcode they do not implement with no question at all, and later
 * messages of a zone transfer may omit it.
 */
export function matchesRelay(resp: Uint8Array, sent: Uint8Array, questionEnd: number): boolean {
  if (resp.length < 12 || !(resp[2] & 0x80) || u16(resp, 0) !== u16(sent, 0)) return false;
  return u16(resp, 4) === 0 || questionEnd <= 12 || sameQuestion(resp, sent, questionEnd);
}

/** Whether a received message is the reply to what was sent. */
type Matcher = (resp: Uint8Array) => boolean;

function bindRandom(family: 4 | 6): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    let tries = 0;
    const attempt = () => {
      const s = dgram.createSocket(family === 4 ? "udp4" : "udp6");
      const port = tries < 8 ? randomPort() : 0;
      s.once("error", (e) => {
        s.close();
        if (++tries <= 8) attempt();
        else reject(e);
      });
      s.bind({ port, address: family === 4 ? "0.0.0.0" : "::", exclusive: true }, () => {
        s.removeAllListeners("error");
        resolve(s);
      });
    };
    attempt();
  });
}

/** Exchanges one query over UDP; resolves undefined on timeout. */
async function exchangeUdp(
  u: Upstream,
  msg: Uint8Array,
  matches: Matcher,
  timeoutMs: number,
): Promise<Uint8Array | undefined> {
  const sock = await bindRandom(u.host.includes(":") ? 6 : 4);
  try {
    return await new Promise<Uint8Array | undefined>((resolve, reject) => {
      const timer = setTimeout(() => resolve(undefined), timeoutMs);
      sock.on("message", (m: Buffer, rinfo: { address: string; port: number }) => {
        if (rinfo.port !== u.port || rinfo.address !== u.host) return;
        const b = new Uint8Array(m.buffer, m.byteOffset, m.byteLength);
        if (!matches(b)) return;
        clearTimeout(timer);
        resolve(b);
      });
      sock.on("error", (e) => {
        clearTimeout(timer);
        reject(e);
      });
      sock.send(msg, u.port, u.host, (err) => {
        if (err) {
          clearTimeout(timer);
          reject(err);
        }
      });
    });
  } finally {
    sock.close();
  }
}

/**
 * Exchanges one message over TCP (2-byte length prefix); resolves undefined on timeout. With
 * `more`, the answer may be several messages: each reply is offered to `more`, which keeps it and
 * returns true while others follow, and the timeout runs per message.
 */
export async function exchangeTcp(
  u: Upstream,
  msg: Uint8Array,
  matches: Matcher,
  timeoutMs: number,
  more?: (reply: Uint8Array) => boolean,
): Promise<Uint8Array | undefined> {
  let conn: Deno.TcpConn | undefined;
  let timedOut = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    clearTimeout(timer);
    timer = setTimeout(() => {
      timedOut = true;
      try {
        conn?.close();
      } catch { /* already closed */ }
    }, timeoutMs);
  };
  arm();
  try {
    conn = await Deno.connect({ hostname: u.host, port: u.port });
    if (timedOut) return undefined;
    const framed = new Uint8Array(msg.length + 2);
    put16(framed, 0, msg.length);
    framed.set(msg, 2);
    let w = 0;
    while (w < framed.length) w += await conn.write(framed.subarray(w));
    let buf = new Uint8Array(0);
    const chunk = new Uint8Array(65538);
    for (;;) {
      const n = await conn.read(chunk);
      if (n === null) return undefined;
      const next = new Uint8Array(buf.length + n);
      next.set(buf);
      next.set(chunk.subarray(0, n), buf.length);
      buf = next;
      while (buf.length >= 2 && buf.length >= 2 + u16(buf, 0)) {
        const m = buf.slice(2, 2 + u16(buf, 0));
        buf = buf.slice(2 + m.length);
        if (!matches(m)) continue;
        if (!more?.(m)) return m;
        arm();
      }
    }
  } catch (e) {
    if (timedOut) return undefined;
    throw e;
  } finally {
    clearTimeout(timer);
    try {
      conn?.close();
    } catch { /* closed by the timer */ }
  }
}

/**
 * A multi-message answer relayed over TCP (a zone transfer): `last(reply)` says whether a reply
 * ends it; `part(reply)` passes on one that does not (with the client's ID).
 */
export interface ReplyStream {
  last(reply: Uint8Array): boolean;
  part(reply: Uint8Array): void;
}

/** Forwards queries to a list of upstreams, in order. */
export class Forwarder {
  upstreams: Upstream[];
  readonly timeoutMs: number;
  readonly #onAttempt?: ForwarderOptions["onAttempt"];
  readonly #now: () => number;

  constructor(opts: ForwarderOptions) {
    this.upstreams = opts.upstreams;
    this.timeoutMs = opts.timeoutMs ?? 2000;
    this.#onAttempt = opts.onAttempt;
    this.#now = opts.now ?? (() => performance.now());
  }

  /**
   * Forwards the query bytes (`questionEnd` = end of its question). Returns the upstream's reply
   * with the client's original ID restored, or undefined when every upstream failed.
   */
  async forward(query: Uint8Array, questionEnd: number): Promise<Uint8Array | undefined> {
    const clientId = u16(query, 0);
    for (const u of this.upstreams) {
      const msg = query.slice();
      put16(msg, 0, randomId());
      const matches = (m: Uint8Array) => matchesQuery(m, msg, questionEnd);
      let reply = await this.#attempt(
        u,
        "udp",
        () => exchangeUdp(u, msg, matches, this.timeoutMs),
      );
      if (reply && (reply[2] & 0x02)) {
        put16(msg, 0, randomId());
        reply = await this.#attempt(
          u,
          "tcp",
          () => exchangeTcp(u, msg, matches, this.timeoutMs),
        );
      }
      if (reply) return withId(reply, clientId);
    }
    return undefined;
  }

  /**
   * Relays a message as received (only the ID differs on the way) over `transport`, the one the
   * client used, and returns the upstream's reply as sent, with the client's ID; undefined when
   * every upstream failed, or when `stream` (TCP only) already passed on part of the answer and the
   * upstream then broke off — no other upstream can continue it.
   */
  async relay(
    query: Uint8Array,
    questionEnd: number,
    transport: "udp" | "tcp",
    stream?: ReplyStream,
  ): Promise<Uint8Array | undefined> {
    const clientId = u16(query, 0);
    for (const u of this.upstreams) {
      const msg = query.slice();
      put16(msg, 0, randomId());
      const matches = (m: Uint8Array) => matchesRelay(m, msg, questionEnd);
      let parts = 0;
      const more = stream && ((m: Uint8Array) => {
        if (stream.last(m)) return false;
        parts++;
        stream.part(withId(m, clientId));
        return true;
      });
      const reply = await this.#attempt(
        u,
        transport,
        () =>
          transport === "udp"
            ? exchangeUdp(u, msg, matches, this.timeoutMs)
            : exchangeTcp(u, msg, matches, this.timeoutMs, more),
      );
      if (reply) return withId(reply, clientId);
      if (parts) return undefined;
    }
    return undefined;
  }

  async #attempt(
    u: Upstream,
    transport: "udp" | "tcp",
    fn: () => Promise<Uint8Array | undefined>,
  ): Promise<Uint8Array | undefined> {
    const t0 = this.#now();
    let result: AttemptResult = "ok";
    try {
      const r = await fn();
      if (!r) result = "timeout";
      return r;
    } catch {
      result = "error";
      return undefined;
    } finally {
      this.#onAttempt?.(u, (this.#now() - t0) / 1000, result, transport);
    }
  }
}

/** A copy of `reply` carrying `id`. */
function withId(reply: Uint8Array, id: number): Uint8Array {
  const out = reply.slice();
  put16(out, 0, id);
  return out;
}
