/**
 * A small HTTP/1.1 client for tests and the demo, on node:http so the Host header and connection
 * reuse are under our control (fetch forbids setting Host).
 * @module
 */
import http from "node:http";
import https from "node:https";

/** One response, fully read. */
export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The echo backend's JSON reply, when the body is one. */
  json?: Record<string, unknown>;
}

/** Request options. */
export interface HttpRequest {
  port: number;
  host?: string;
  /** Host header (default `host`). */
  authority?: string;
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string;
  agent?: http.Agent;
  timeoutMs?: number;
  /** Use TLS: trust `ca` (PEM) and send `servername` as SNI. */
  tls?: { ca: string; servername: string };
}

/** Sends one request and reads the whole response. */
export function request(req: HttpRequest): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const client = req.tls ? https : http;
    const r = client.request({
      ...(req.tls ? { ca: req.tls.ca, servername: req.tls.servername } : {}),
      host: req.host ?? "127.0.0.1",
      port: req.port,
      method: req.method ?? "GET",
      path: req.path ?? "/",
      headers: { host: req.authority ?? req.host ?? "127.0.0.1", ...req.headers },
      agent: req.agent ?? false,
      timeout: req.timeoutMs ?? 10000,
    }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => {
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) {
          if (v !== undefined) headers[k] = Array.isArray(v) ? v.join(",") : v;
        }
        let json: Record<string, unknown> | undefined;
        if ((headers["content-type"] ?? "").includes("json")) {
          try {
            json = JSON.parse(body);
          } catch { /* not JSON after all */ }
        }
        resolve({ status: res.statusCode ?? 0, headers, body, json });
      });
      res.on("error", reject);
    });
    r.on(
      "timeout",
      () => r.destroy(new Error(`request timed out after ${req.timeoutMs ?? 10000} ms`)),
    );
    r.on("error", reject);
    if (req.body) r.write(req.body);
    r.end();
  });
}

/** Sends `count` requests (`concurrency` at a time) and counts answers by `keyOf`. */
export async function countBy(
  count: number,
  make: (i: number) => HttpRequest,
  keyOf: (r: HttpResult) => string,
  concurrency = 16,
): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      const res = await request({ ...make(i), agent });
      const key = keyOf(res);
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return counts;
}

export { freePort, freePorts } from "../testbed/free_port.ts";
