/**
 * A minimal client for the local cluster's API server (admin client cert from the kubeconfig the
 * cluster wrote), used by `up` to wait for readiness and by `status`.
 * @module
 */
import { parse } from "yaml";

/** A decoded API response. */
export interface ApiResponse {
  status: number;
  // deno-lint-ignore no-explicit-any
  json: any;
  text: string;
}

/** An API client; `close()` releases its TLS client. */
export interface Api {
  server: string;
  request(method: string, path: string, body?: unknown): Promise<ApiResponse>;
  close(): void;
}

/** Opens a client from a kubeconfig with embedded certificate data (what `up` writes). */
export async function openApi(kubeconfigPath: string): Promise<Api> {
  // deno-lint-ignore no-explicit-any
  const kc = parse(await Deno.readTextFile(kubeconfigPath)) as any;
  const cluster = kc.clusters[0].cluster, user = kc.users[0].user;
  const dec = (b: string) => atob(b);
  const client = Deno.createHttpClient({
    caCerts: [dec(cluster["certificate-authority-data"])],
    cert: dec(user["client-certificate-data"]),
    key: dec(user["client-key-data"]),
  });
  const server: string = cluster.server;
  return {
    server,
    async request(method, path, body) {
      const res = await fetch(`${server}${path}`, {
        method,
        client,
        headers: body === undefined ? {} : { "content-type": "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      let json: unknown = undefined;
      try {
        json = JSON.parse(text);
      } catch { /* /readyz and friends answer text */ }
      return { status: res.status, json, text };
    },
    close: () => client.close(),
  };
}

/** Polls `fn` every 200 ms until it returns a value, or throws after `ms` with `what` and the last error. */
export async function poll<T>(
  what: string,
  fn: () => Promise<T | undefined>,
  ms: number,
  check?: () => Promise<void>,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    if (check) await check();
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    `timed out after ${Math.round(ms / 1000)}s waiting for ${what}` +
      (last ? `: ${(last as Error).message ?? last}` : ""),
  );
}
