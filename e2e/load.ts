/**
 * A bounded background request loop for e2e tests: keeps `concurrency` kept-alive HTTP/1.1
 * clients sending to loopback until stopped (or `maxSeconds` pass), and counts every answer that
 * is not 2xx (including connection errors) per key.
 * @module
 */
import http from "node:http";
import { request } from "./http_client.ts";

/** What a load run saw. */
export interface LoadResult {
  sent: number;
  /** Answers that were not 2xx, by "HTTP <status> <authority>" or "error <authority>: <msg>". */
  failures: Map<string, number>;
  failed: number;
  seconds: number;
  rate: number;
}

/** Options of {@link startLoad}. */
export interface LoadOptions {
  port: number;
  /** Host headers to cycle through (each a route that must keep answering 2xx). */
  authorities: string[];
  path?: string;
  concurrency?: number;
  /** Hard stop for a forgotten loop (default 600 s). */
  maxSeconds?: number;
}

/** Starts the loop; `stop()` ends it and returns the counts. */
export function startLoad(o: LoadOptions): { stop(): Promise<LoadResult>; sent(): number } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: o.concurrency ?? 8 });
  const started = performance.now();
  const deadline = Date.now() + (o.maxSeconds ?? 600) * 1000;
  const failures = new Map<string, number>();
  let sent = 0, failed = 0, stopping = false;
  const fail = (key: string) => {
    failed++;
    failures.set(key, (failures.get(key) ?? 0) + 1);
  };
  const worker = async (w: number) => {
    for (let i = w; !stopping && Date.now() < deadline; i++) {
      const authority = o.authorities[i % o.authorities.length];
      try {
        const r = await request({ port: o.port, authority, path: o.path ?? "/", agent });
        if (r.status < 200 || r.status > 299) fail(`HTTP ${r.status} ${authority}`);
      } catch (e) {
        fail(`error ${authority}: ${(e as Error).message}`);
      }
      sent++;
    }
  };
  const workers = Array.from({ length: o.concurrency ?? 8 }, (_, w) => worker(w));
  return {
    sent: () => sent,
    stop: async () => {
      stopping = true;
      await Promise.all(workers);
      agent.destroy();
      const seconds = (performance.now() - started) / 1000;
      return { sent, failures, failed, seconds, rate: sent / seconds };
    },
  };
}
