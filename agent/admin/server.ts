/**
 * The agent's admin HTTP server (default 127.0.0.1:15000): `/healthz`, `/readyz` (200 only when
 * Envoy has ACKed the current config), `/status` (every object with its computed status, JSON),
 * `/debug/xds` (resources per node, JSON), `/debug/capture` (with transparent capture: each pod's
 * nftables table and capture listener, JSON) and `/metrics` (Prometheus text).
 * @module
 */
import type { Registry } from "../../lib/metrics/mod.ts";

/** What the admin server asks the agent. */
export interface AdminHandlers {
  /** Ready when Envoy has ACKed the current version; `detail` explains a not-ready answer. */
  readiness(): { ready: boolean; detail: string };
  /** The `/status` document. */
  status(): unknown;
  /** The `/debug/xds` document. */
  xds(): unknown;
  /** The `/debug/capture` document; absent where capture is off (404 then). */
  capture?: () => unknown;
  metrics: Registry;
  /** Called before `/metrics` renders (e.g. to fold batched counters into the registry). */
  beforeMetrics?: () => void;
}

/** A running admin server. */
export interface AdminServer {
  /** `host:port` actually bound. */
  address: string;
  close(): Promise<void>;
}

function json(body: unknown, status = 200): Response {
  return new Response(JSON.stringify(body, null, 2) + "\n", {
    status,
    headers: { "content-type": "application/json" },
  });
}

/** Routes one admin request (exported for tests). */
export function handleAdmin(handlers: AdminHandlers, req: Request): Response {
  const { pathname } = new URL(req.url);
  if (req.method !== "GET" && req.method !== "HEAD") {
    return new Response("method not allowed\n", { status: 405 });
  }
  switch (pathname) {
    case "/healthz":
      return new Response("ok\n");
    case "/readyz": {
      const r = handlers.readiness();
      return new Response(`${r.detail}\n`, { status: r.ready ? 200 : 503 });
    }
    case "/status":
      return json(handlers.status());
    case "/debug/xds":
      return json(handlers.xds());
    case "/debug/capture":
      return handlers.capture
        ? json(handlers.capture())
        : new Response("transparent capture is off (agent node --capture)\n", { status: 404 });
    case "/metrics":
      handlers.beforeMetrics?.();
      return new Response(handlers.metrics.render(), {
        headers: { "content-type": "text/plain; version=0.0.4" },
      });
    default:
      return new Response(
        "not found; try /healthz /readyz /status /debug/xds /debug/capture /metrics\n",
        {
          status: 404,
        },
      );
  }
}

/** Splits `host:port` (IPv6 in brackets allowed). */
export function splitHostPort(address: string): { hostname: string; port: number } {
  const m = /^\[?([^\]]*?)\]?:(\d+)$/.exec(address);
  if (!m) throw new Error(`invalid address "${address}": expected host:port, e.g. 127.0.0.1:15000`);
  return { hostname: m[1], port: Number(m[2]) };
}

/** Starts the admin server on `address` (`host:port`, port 0 = ephemeral). */
export function startAdmin(address: string, handlers: AdminHandlers): Promise<AdminServer> {
  const { hostname, port } = splitHostPort(address);
  return new Promise((resolve, reject) => {
    try {
      const server = Deno.serve({
        hostname,
        port,
        onListen: (addr) =>
          resolve({
            address: `${addr.hostname}:${addr.port}`,
            close: () => server.shutdown(),
          }),
      }, (req) => handleAdmin(handlers, req));
    } catch (e) {
      reject(new Error(`cannot bind admin server on ${address}: ${(e as Error).message}`));
    }
  });
}
