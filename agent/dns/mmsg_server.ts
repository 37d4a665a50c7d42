/**
 * The batched UDP listener: `recvmmsg` takes up to {@link BATCH} datagrams per call into buffers
 * this object owns, the handler answers each (synchronously for mesh names and cache hits), and
 * one `sendmmsg` sends every synchronous answer of the batch. The socket is non-blocking and the
 * drain loop runs on the JS thread with synchronous FFI calls, so under load there is no async
 * operation per datagram — nor per batch: only when the socket is empty does the loop wait, in a
 * `poll` run off-thread (one async op per wake-up). Safety argument: docs/dns.md.
 *
 * Buffer ownership: the receive and send areas are written by the kernel only during the
 * synchronous `recvmmsg`/`sendmmsg` calls; the only call in flight while JS runs is `poll`, which
 * touches nothing but its own pollfd array. The handler never sees the receive area: each
 * datagram is copied out first, because a forwarded query keeps its bytes past the batch.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { QueryHandler } from "./handler.ts";
import {
  addressOf,
  IOVEC_SIZE,
  type Libc,
  LINUX,
  MMSGHDR_SIZE,
  sockaddr,
  SOCKADDR_SIZE,
  sockaddrIp,
  sockaddrPort,
} from "./libc.ts";

/** Datagrams per recvmmsg/sendmmsg call. */
export const BATCH = 64;
/**
 * Bytes per receive slot: the largest UDP payload fits (65,507 over IPv4, 65,527 over IPv6), so
 * every datagram reaches the strict parser whole, as on the plain path (an oversized query gets
 * FORMERR, not silence). Only the bytes received are ever written, so the untouched pages of the
 * 4 MiB area cost no memory. Should a datagram still be cut (MSG_TRUNC), it is dropped.
 */
export const RX_SLOT = 65536;
/** Bytes per send slot; a longer answer (TCP-sized EDNS) goes out in its own sendto. */
export const TX_SLOT = 4096;
/** Full batches handled back to back before the loop lets other tasks run. */
const SPIN = 16;

/** A batch of mmsghdr + iovec + sockaddr + data slots, laid out once, owned by one server. */
class Ring {
  readonly hdrs = new Uint8Array(BATCH * MMSGHDR_SIZE);
  readonly hv = new DataView(this.hdrs.buffer);
  readonly iov = new Uint8Array(BATCH * IOVEC_SIZE);
  readonly iv = new DataView(this.iov.buffer);
  readonly names = new Uint8Array(BATCH * SOCKADDR_SIZE);
  readonly data: Uint8Array;

  constructor(readonly slot: number) {
    this.data = new Uint8Array(BATCH * slot);
    const iov0 = addressOf(this.iov), names0 = addressOf(this.names), data0 = addressOf(this.data);
    for (let i = 0; i < BATCH; i++) {
      const h = i * MMSGHDR_SIZE;
      this.hv.setBigUint64(h, names0 + BigInt(i * SOCKADDR_SIZE), true); // msg_name
      this.hv.setUint32(h + 8, SOCKADDR_SIZE, true); // msg_namelen
      this.hv.setBigUint64(h + 16, iov0 + BigInt(i * IOVEC_SIZE), true); // msg_iov
      this.hv.setBigUint64(h + 24, 1n, true); // msg_iovlen
      this.iv.setBigUint64(i * IOVEC_SIZE, data0 + BigInt(i * slot), true); // iov_base
      this.iv.setBigUint64(i * IOVEC_SIZE + 8, BigInt(slot), true); // iov_len
    }
  }
}

/** A bound, batched UDP DNS socket. */
export class MmsgUdpServer {
  readonly address: string;
  readonly port: number;
  readonly #libc: Libc;
  readonly #fd: number;
  readonly #wake: number;
  readonly #handler: QueryHandler;
  readonly #log: Logger;
  readonly #rx = new Ring(RX_SLOT);
  readonly #tx = new Ring(TX_SLOT);
  readonly #pollfds = new Uint8Array(16);
  #closed = false;
  readonly #loop: Promise<void>;

  private constructor(
    libc: Libc,
    fd: number,
    wake: number,
    handler: QueryHandler,
    address: string,
    port: number,
    log: Logger,
    onFail: (e: Error) => void,
  ) {
    this.#libc = libc;
    this.#fd = fd;
    this.#wake = wake;
    this.#handler = handler;
    this.#log = log;
    this.address = address;
    this.port = port;
    const pv = new DataView(this.#pollfds.buffer);
    pv.setInt32(0, fd, true);
    pv.setInt16(4, LINUX.POLLIN, true);
    pv.setInt32(8, wake, true);
    pv.setInt16(12, LINUX.POLLIN, true);
    this.#loop = this.#run().catch((e) => {
      if (this.#closed) return;
      this.#closed = true;
      this.#release();
      onFail(e as Error);
    });
  }

  /**
   * Binds `address:port` (0 = any free port). `onFail` is called once if the loop dies (the
   * socket is closed by then, so the caller can bind the same port on another path).
   */
  static listen(
    libc: Libc,
    handler: QueryHandler,
    address: string,
    port: number,
    logger: Logger,
    onFail: (e: Error) => void,
  ): MmsgUdpServer {
    const v6 = address.includes(":");
    const sa = sockaddr(libc, address, port);
    const fd = libc.socket(
      v6 ? LINUX.AF_INET6 : LINUX.AF_INET,
      LINUX.SOCK_DGRAM | LINUX.SOCK_NONBLOCK | LINUX.SOCK_CLOEXEC,
      0,
    );
    if (fd < 0) throw new Error(`socket() failed: errno ${libc.errno()}`);
    const int = (v: number) => new Uint8Array(new Int32Array([v]).buffer);
    if (v6) libc.setsockopt(fd, LINUX.IPPROTO_IPV6, LINUX.IPV6_V6ONLY, int(1), 4);
    // Room for bursts while the loop is busy (the kernel caps it at net.core.rmem_max).
    libc.setsockopt(fd, LINUX.SOL_SOCKET, LINUX.SO_RCVBUF, int(1 << 22), 4);
    if (libc.bind(fd, sa, sa.length) !== 0) {
      const errno = libc.errno();
      libc.close(fd);
      if (errno === 98) throw new Deno.errors.AddrInUse(`${address}:${port} is in use`);
      throw new Error(`bind ${address}:${port} failed: errno ${errno}`);
    }
    const bound = new Uint8Array(SOCKADDR_SIZE);
    libc.getsockname(fd, bound, new Uint8Array(new Uint32Array([SOCKADDR_SIZE]).buffer));
    const wake = libc.eventfd(0, LINUX.EFD_NONBLOCK | LINUX.EFD_CLOEXEC);
    if (wake < 0) {
      libc.close(fd);
      throw new Error(`eventfd() failed: errno ${libc.errno()}`);
    }
    return new MmsgUdpServer(
      libc,
      fd,
      wake,
      handler,
      address,
      sockaddrPort(bound),
      logger,
      onFail,
    );
  }

  async #run(): Promise<void> {
    const libc = this.#libc;
    let spins = 0;
    while (!this.#closed) {
      const n = libc.recvmmsg(this.#fd, this.#rx.hdrs, BATCH, LINUX.MSG_DONTWAIT, null);
      if (n < 0) {
        const errno = libc.errno();
        if (errno === LINUX.EINTR) continue;
        if (errno !== LINUX.EAGAIN) throw new Error(`recvmmsg failed: errno ${errno}`);
        spins = 0;
        // Empty: wait off-thread until a datagram (or close's wake-up) arrives.
        await libc.poll(this.#pollfds, 2n, 1000);
        continue;
      }
      this.#batch(n);
      if (n === BATCH && ++spins < SPIN) continue;
      spins = 0;
      // Let timers, forwarded answers and TCP run between bursts.
      await libc.poll(this.#pollfds, 0n, 0);
    }
  }

  /** Answers `n` received datagrams; sends the synchronous answers in one sendmmsg. */
  #batch(n: number): void {
    const rx = this.#rx, tx = this.#tx;
    let out = 0;
    for (let i = 0; i < n; i++) {
      const h = i * MMSGHDR_SIZE;
      const len = rx.hv.getUint32(h + 56, true);
      const flags = rx.hv.getInt32(h + 48, true);
      const namelen = rx.hv.getUint32(h + 8, true);
      rx.hv.setUint32(h + 8, SOCKADDR_SIZE, true); // value-result: reset for the next call
      if (flags & LINUX.MSG_TRUNC) continue; // cut by the kernel: not the datagram that was sent
      const nameAt = i * SOCKADDR_SIZE;
      const raw = rx.data.slice(i * RX_SLOT, i * RX_SLOT + len);
      const reply = this.#handler.handle(raw, sockaddrIp(rx.names, nameAt), "udp");
      if (reply === undefined) continue;
      if (reply instanceof Promise) {
        const to = rx.names.slice(nameAt, nameAt + namelen);
        reply.then((r) => r && this.#sendOne(r, to), () => {});
        continue;
      }
      if (reply.length > TX_SLOT) {
        this.#sendOne(reply, rx.names.slice(nameAt, nameAt + namelen));
        continue;
      }
      const th = out * MMSGHDR_SIZE;
      tx.names.set(rx.names.subarray(nameAt, nameAt + namelen), out * SOCKADDR_SIZE);
      tx.hv.setUint32(th + 8, namelen, true);
      tx.data.set(reply, out * TX_SLOT);
      tx.iv.setBigUint64(out * IOVEC_SIZE + 8, BigInt(reply.length), true);
      out++;
    }
    let sent = 0;
    while (sent < out) {
      const r = this.#libc.sendmmsg(
        this.#fd,
        sent === 0 ? tx.hdrs : tx.hdrs.subarray(sent * MMSGHDR_SIZE),
        out - sent,
        LINUX.MSG_DONTWAIT,
      );
      if (r > 0) sent += r;
      else if (r < 0 && this.#libc.errno() === LINUX.EINTR) continue;
      else {
        // Send buffer full (or the client's port unreachable): drop the rest, as UDP may.
        this.#log.debug("dns udp sendmmsg dropped answers", {
          dropped: out - sent,
          errno: this.#libc.errno(),
        });
        break;
      }
    }
  }

  #sendOne(reply: Uint8Array, to: Uint8Array): void {
    if (this.#closed) return;
    if (
      this.#libc.sendto(this.#fd, reply, BigInt(reply.length), LINUX.MSG_DONTWAIT, to, to.length) <
        0
    ) {
      this.#log.debug("dns udp send failed", { errno: this.#libc.errno() });
    }
  }

  #release(): void {
    this.#libc.close(this.#fd);
    this.#libc.close(this.#wake);
  }

  /** Stops the loop (waking its poll) and closes the socket once no call is in flight. */
  async close(): Promise<void> {
    if (this.#closed) return await this.#loop;
    this.#closed = true;
    this.#libc.write(this.#wake, new Uint8Array(new BigUint64Array([1n]).buffer), 8n);
    await this.#loop;
    this.#release();
  }
}
