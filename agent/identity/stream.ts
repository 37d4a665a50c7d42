/**
 * A server stream from a SPIRE socket that reconnects with exponential backoff (and jitter) when
 * it breaks or ends; the backoff resets once a message arrives. While it is down the consumer
 * keeps what it last received.
 *
 * Each attempt dials on a channel of its own, closed when the attempt ends, so this backoff is
 * the only one: a grpc-js channel that lost its socket keeps failing calls at once with its
 * cached error ("No connection established … ENOENT") until its own reconnect backoff (1 s
 * growing 1.6× to 120 s) lets it dial again, and grpc-js's global subchannel pool would hand even
 * a new channel that same subchannel. After a 60 s outage that put re-subscription 24–40 s after
 * SPIRE was back (spire_reconnect_test.ts).
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import type { Logger } from "../../lib/log/mod.ts";
import type { StreamMethod } from "./proto.ts";

/** Backoff bounds in ms. */
export interface BackoffOptions {
  /** First retry delay. Default 200. */
  initialMs?: number;
  /** Largest delay. Default 5000. */
  maxMs?: number;
}

/**
 * A gRPC client on a unix socket (`path`), plaintext: the socket's permissions are the guard. Its
 * channel has a subchannel of its own (no backoff state or cached error from another channel).
 */
export function unixClient(path: string): grpc.Client {
  return new grpc.Client(`unix:${path}`, grpc.credentials.createInsecure(), {
    // SPIRE sends whole SVID sets; a node with many identities can exceed the 4 MiB default.
    "grpc.max_receive_message_length": 64 << 20,
    "grpc.use_local_subchannel_pool": 1,
  });
}

/** Options of {@link ReconnectingStream}. */
export interface ReconnectingStreamOptions<Req, Res> extends BackoffOptions {
  /** The unix socket each attempt dials (on a channel of its own). */
  socket: string;
  method: StreamMethod<Req, Res>;
  request: Req;
  /** Call metadata (the Workload API needs `workload.spiffe.io: true`). */
  metadata?: Record<string, string>;
  /** Each message. A throw is logged and the stream goes on. */
  onMessage(message: Res): void;
  /** Connected (first message of a stream) or disconnected. */
  onState?(connected: boolean, error?: string): void;
  logger: Logger;
  /** What the stream is, for logs. */
  what: string;
  /** What to check when it is down (logged with each retry). */
  hint?: string;
}

/** One reconnecting server stream; {@link close} ends it for good. */
export class ReconnectingStream<Req, Res> {
  #client?: grpc.Client;
  #call?: grpc.ClientReadableStream<Res>;
  #timer?: ReturnType<typeof setTimeout>;
  #delay: number;
  #closed = false;
  #connected = false;

  constructor(readonly o: ReconnectingStreamOptions<Req, Res>) {
    this.#delay = o.initialMs ?? 200;
    this.#open();
  }

  /** True while a stream is up and has delivered a message. */
  get connected(): boolean {
    return this.#connected;
  }

  #open(): void {
    if (this.#closed) return;
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(this.o.metadata ?? {})) md.set(k, v);
    const client = unixClient(this.o.socket);
    this.#client = client;
    const call = client.makeServerStreamRequest(
      this.o.method.path,
      this.o.method.serialize,
      this.o.method.deserialize,
      this.o.request,
      md,
    );
    this.#call = call;
    call.on("data", (m: Res) => {
      if (call !== this.#call) return;
      this.#delay = this.o.initialMs ?? 200;
      if (!this.#connected) {
        this.#connected = true;
        this.o.onState?.(true);
      }
      try {
        this.o.onMessage(m);
      } catch (e) {
        this.o.logger.error("update not applied", { what: this.o.what, error: String(e) });
      }
    });
    let done = false;
    const broken = (error: string) => {
      if (done || call !== this.#call) return;
      done = true;
      client.close();
      if (this.#closed) return;
      if (this.#connected) this.#connected = false;
      this.o.onState?.(false, error);
      const delay = this.#delay * (0.8 + Math.random() * 0.4);
      this.#delay = Math.min(this.#delay * 2, this.o.maxMs ?? 5000);
      this.o.logger.warn("SPIRE stream down; retrying", {
        what: this.o.what,
        error,
        retryMs: Math.round(delay),
        ...(this.o.hint ? { hint: this.o.hint } : {}),
      });
      this.#timer = setTimeout(() => this.#open(), delay);
    };
    call.on("error", (e: Error) => broken(e.message));
    call.on("end", () => broken("stream ended"));
    call.on("status", (s: grpc.StatusObject) => {
      if (s.code !== grpc.status.OK) broken(`${grpc.status[s.code]}: ${s.details}`);
    });
  }

  /** Ends the stream and stops reconnecting. */
  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    this.#call?.cancel();
    this.#call = undefined;
    this.#client?.close();
    this.#client = undefined;
  }
}
