/**
 * The node agent's CNI socket (`/run/aether/cni.sock` on the host): the plugin binary forwards
 * each invocation here (cni/protocol.ts frames), cni/handler.ts decides, and the attachments live
 * in the {@link CniSource}. An ADD is answered once the injected `captured(pod)` resolves, within
 * the configuration's bound (`timeoutSeconds`, default 30 s), else with error 11. One connection
 * is one invocation; a connection that sends a bad frame, too much, or nothing within 5 s gets a
 * CNI error reply and is closed — nothing a client sends stops the server. The socket is
 * root-only (mode 0600): the runtime runs the plugin as root.
 * @module
 */
import { dirname } from "node:path";
import type { Logger } from "../../lib/log/mod.ts";
import {
  cniError,
  CODES,
  encodeReply,
  FrameError,
  handleCni,
  type PodAttachment,
  readRequest,
  type Reply,
} from "../../cni/mod.ts";
import { CniSource } from "./cni_source.ts";

/** Resolves once `pod` is captured (its rules and listeners live); `signal` aborts the wait. */
export type CapturedWait = (pod: PodAttachment, signal: AbortSignal) => Promise<void>;

/** Options of {@link CniServer}. */
export interface CniServerOptions {
  /** The unix socket to listen on (a stale one is replaced). */
  socketPath: string;
  /** Where attachments are recorded (and delivered as PodNetwork records). */
  source: CniSource;
  captured: CapturedWait;
  logger: Logger;
  /** How long a client may take to send its request (default 5 s). */
  readTimeoutMs?: number;
  /** Invocations handled at once; more are told to try again (default 256). */
  maxInFlight?: number;
}

/** The CNI socket server. */
export class CniServer {
  #listener?: Deno.Listener;
  readonly #inFlight = new Set<Promise<void>>();
  #accepting?: Promise<void>;

  constructor(readonly options: CniServerOptions) {}

  /** Listens; resolves once the socket accepts connections. */
  async start(): Promise<void> {
    const path = this.options.socketPath;
    await Deno.mkdir(dirname(path), { recursive: true });
    await Deno.remove(path).catch(() => {});
    this.#listener = Deno.listen({ transport: "unix", path });
    await Deno.chmod(path, 0o600);
    this.#accepting = this.#accept(this.#listener);
  }

  /** Stops listening and waits for the invocations under way. */
  async close(): Promise<void> {
    try {
      this.#listener?.close();
    } catch { /* closed */ }
    await this.#accepting;
    await Promise.all([...this.#inFlight]);
    await Deno.remove(this.options.socketPath).catch(() => {});
  }

  async #accept(listener: Deno.Listener): Promise<void> {
    for (;;) {
      let conn: Deno.Conn;
      try {
        conn = await listener.accept();
      } catch {
        return; // closed
      }
      const job = this.#serve(conn).finally(() => this.#inFlight.delete(job));
      this.#inFlight.add(job);
    }
  }

  async #serve(conn: Deno.Conn): Promise<void> {
    const o = this.options;
    const started = Date.now();
    let reply: Reply;
    let what: Record<string, unknown> = {};
    try {
      if (this.#inFlight.size > (o.maxInFlight ?? 256)) {
        reply = cniError("1.0.0", CODES.tryAgainLater, "the aether node agent is busy");
      } else {
        const req = await withTimeout(readRequest(conn), o.readTimeoutMs ?? 5000);
        what = {
          verb: req.env.CNI_COMMAND,
          container: req.env.CNI_CONTAINERID,
          args: req.env.CNI_ARGS,
        };
        reply = await handleCni(req, {
          attach: (a) => o.source.attach(a),
          detach: (c, i) => o.source.detach(c, i),
          attachment: (c, i) => o.source.attachment(c, i),
          retain: (v) => o.source.retain(v),
          captured: o.captured,
        });
      }
    } catch (e) {
      const msg = e instanceof FrameError || e instanceof TimedOut
        ? `bad request from the plugin: ${e.message}`
        : `the aether node agent failed: ${(e as Error).message}`;
      reply = cniError("1.0.0", CODES.decodingFailure, msg);
    }
    const fields = { ...what, exit: reply.exitCode, ms: Date.now() - started };
    if (reply.exitCode === 0) o.logger.debug("cni", fields);
    else o.logger.warn("cni invocation failed", { ...fields, reply: reply.stdout.trim() });
    try {
      const frame = encodeReply(reply);
      for (let at = 0; at < frame.length;) at += await conn.write(frame.subarray(at));
    } catch { /* the plugin went away; it answers for itself */ }
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

class TimedOut extends Error {}

/** `p`, or a {@link TimedOut} rejection after `ms`. */
async function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new TimedOut(`no whole request within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** What {@link startCni} started. */
export interface CniCapture {
  source: CniSource;
  server: CniServer;
  close(): Promise<void>;
}

/**
 * The node agent's CNI side: the records under `<stateDir>/cni-pods` (`source`, a MergedSource
 * partition, origin `cni`) and the socket server (`server`; start it before the merged source,
 * whose first revision waits for the API server: ADDs meanwhile wait for `captured` as usual).
 */
export function cniCapture(opts: {
  stateDir: string;
  socketPath: string;
  captured: CapturedWait;
  logger: Logger;
  readTimeoutMs?: number;
}): CniCapture {
  const source = new CniSource({ dir: `${opts.stateDir}/cni-pods`, logger: opts.logger });
  const server = new CniServer({ ...opts, source });
  return { source, server, close: () => server.close() };
}
