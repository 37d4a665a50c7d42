/**
 * A server stream from a SPIRE socket that reconnects with exponential backoff (and jitter) when
 * it breaks or ends; the backoff resets once a message arrives. While it is down the consumer
 * keeps what it last received.
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

/** A gRPC client on a unix socket (`path`), plaintext: the socket's permissions are the guard. */
export function unixClient(path: string): grpc.Client {
  return new grpc.Client(`unix:${path}`, grpc.credentials.createInsecure(), {
    // SPIRE sends whole SVID sets; a node with many identities can exceed the 4 MiB default.
    "grpc.max_receive_message_length": 64 << 20,
  });
}

/** Options of {@link ReconnectingStream}. */
export interface ReconnectingStreamOptions<Req, Res> extends BackoffOptions {
  client: grpc.Client;
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
    const call = this.o.client.makeServerStreamRequest(
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
  }
}
