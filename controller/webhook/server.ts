/**
 * The webhook's HTTPS server (`node:https`, whose `setSecureContext` swaps the certificate for new
 * connections without closing the listening socket: a renewal is not a restart). POST `<path>` takes an
 * AdmissionReview and answers with `handle`'s review, always 200 with JSON; a body that is too
 * large, not JSON or not UTF-8 is handed to `handle` as its text, which answers it as an invalid
 * review. Other paths: 404. A failing handler never takes the server down.
 * @module
 */
import https from "node:https";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../lib/log/mod.ts";
import type { CertAndKey } from "./x509.ts";

/** Server settings. */
export interface WebhookServerOptions {
  hostname: string;
  /** 0 picks a free port. */
  port: number;
  cert: CertAndKey;
  /** Path of the review endpoint, e.g. `/mutate-pod-ndots`. */
  path: string;
  /** Answers one parsed body (or the raw text when it is not JSON). */
  handle: (body: unknown) => Record<string, unknown>;
  logger: Logger;
  /** Largest body read (default 8 MiB: the API server sends at most ~3 MiB of object). */
  maxBodyBytes?: number;
  /** Called on every completed TLS handshake (metrics). */
  onHandshake?: () => void;
}

/** A listening webhook server. */
export class WebhookServer {
  readonly #server: https.Server;
  readonly port: number;

  private constructor(server: https.Server, port: number) {
    this.#server = server;
    this.port = port;
  }

  /** Listens on `hostname:port`. */
  static async start(opts: WebhookServerOptions): Promise<WebhookServer> {
    const max = opts.maxBodyBytes ?? 8 * 1024 * 1024;
    const server = https.createServer(
      { cert: opts.cert.certPem, key: opts.cert.keyPem },
      (req, res) => serve(req, res, opts, max),
    );
    server.on("secureConnection", () => opts.onHandshake?.());
    server.on(
      "tlsClientError",
      (e: Error) => opts.logger.debug("webhook tls error", { error: e.message }),
    );
    server.on(
      "clientError",
      (e: Error) => opts.logger.debug("webhook client error", { error: e.message }),
    );
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(opts.port, opts.hostname, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.on(
      "error",
      (e: Error) => opts.logger.error("webhook server error", { error: e.message }),
    );
    return new WebhookServer(server, (server.address() as { port: number }).port);
  }

  /**
   * Serves `cert` on every connection from now on; idle keep-alive connections (still on the old
   * certificate) are closed, so the next request meets the new one.
   */
  setCert(cert: CertAndKey): void {
    this.#server.setSecureContext({ cert: cert.certPem, key: cert.keyPem });
    this.#server.closeIdleConnections();
  }

  /** Stops listening and ends open connections. */
  close(): Promise<void> {
    return new Promise((resolve) => {
      this.#server.close(() => resolve());
      this.#server.closeAllConnections();
    });
  }
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  const text = typeof body === "string" ? body : JSON.stringify(body);
  res.writeHead(status, {
    "content-type": typeof body === "string" ? "text/plain" : "application/json",
  });
  res.end(text);
}

function serve(
  req: IncomingMessage,
  res: ServerResponse,
  opts: WebhookServerOptions,
  max: number,
): void {
  const url = new URL(req.url ?? "/", "https://webhook");
  if (url.pathname !== opts.path) return reply(res, 404, "not found\n");
  if (req.method !== "POST") return reply(res, 405, "POST an AdmissionReview\n");
  const chunks: Uint8Array[] = [];
  let size = 0, tooLarge = false;
  req.on("data", (c: Uint8Array) => {
    size += c.length;
    if (size > max) tooLarge = true;
    else chunks.push(c);
  });
  req.on("error", (e: Error) => opts.logger.debug("webhook request error", { error: e.message }));
  req.on("end", () => {
    try {
      let body: unknown = tooLarge ? `a body over ${max} bytes` : "";
      if (!tooLarge) {
        const text = new TextDecoder("utf-8", { fatal: false }).decode(concat(chunks));
        try {
          body = JSON.parse(text);
        } catch {
          body = text.slice(0, 200);
        }
      }
      reply(res, 200, opts.handle(body));
    } catch (e) {
      opts.logger.error("webhook handler failed", { error: String(e) });
      reply(res, 500, "internal error\n");
    }
  });
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
}
