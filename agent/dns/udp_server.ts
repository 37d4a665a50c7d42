/**
 * The UDP listener (node:dgram, so no unstable Deno flag is needed). Each datagram goes to the
 * handler; synchronous answers (mesh names, cache hits) are sent without awaiting anything.
 * @module
 */
import dgram from "node:dgram";
import type { Buffer } from "node:buffer";
import type { Logger } from "../../lib/log/mod.ts";
import type { QueryHandler } from "./handler.ts";

/** A bound UDP DNS socket. */
export class UdpServer {
  readonly #sock: dgram.Socket;
  readonly port: number;
  readonly address: string;

  readonly #closed: { v: boolean };

  private constructor(
    sock: dgram.Socket,
    address: string,
    port: number,
    closed: { v: boolean },
  ) {
    this.#sock = sock;
    this.#closed = closed;
    this.address = address;
    this.port = port;
  }

  /** Binds `address:port` (port 0 = any free port) and starts answering. */
  static listen(
    handler: QueryHandler,
    address: string,
    port: number,
    logger: Logger,
  ): Promise<UdpServer> {
    const sock = dgram.createSocket({ type: address.includes(":") ? "udp6" : "udp4" });
    const closed = { v: false };
    return new Promise((resolve, reject) => {
      sock.once("error", reject);
      sock.bind({ address, port, exclusive: true }, () => {
        sock.removeListener("error", reject);
        sock.on("error", (e) => logger.warn("dns udp socket error", { error: String(e) }));
        const send = (reply: Uint8Array | undefined, rinfo: { address: string; port: number }) => {
          if (!reply || closed.v) return;
          try {
            sock.send(reply, rinfo.port, rinfo.address);
          } catch (e) {
            logger.debug("dns udp send failed", { error: String(e) });
          }
        };
        sock.on("message", (msg: Buffer, rinfo: { address: string; port: number }) => {
          const raw = new Uint8Array(msg.buffer, msg.byteOffset, msg.byteLength);
          const r = handler.handle(raw, rinfo.address, "udp");
          if (r instanceof Promise) r.then((x) => send(x, rinfo), () => {});
          else send(r, rinfo);
        });
        resolve(new UdpServer(sock, address, sock.address().port, closed));
      });
    });
  }

  /** Stops listening. */
  close(): Promise<void> {
    this.#closed.v = true;
    return new Promise((resolve) => {
      try {
        this.#sock.close(() => resolve());
      } catch {
        resolve();
      }
    });
  }
}
