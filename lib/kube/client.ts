/**
 * The API-server connection: a kubeconfig file or the in-cluster service account (credentials.ts:
 * CA, client certificates, bearer tokens, token files; exec plugins and auth-providers through
 * `@kubernetes/client-node`, loaded only for them), spoken over Deno's own `fetch` with a client
 * built from those credentials. (The library's undici transport negotiates HTTP/2 through Deno's
 * node:http2 layer, which aborts the process on a server GOAWAY — exactly what a restarting API
 * server sends.)
 * Objects stay plain JSON: nothing is turned into classes or Dates.
 * @module
 */
import { type Credentials, inClusterCredentials, kubeconfigCredentials } from "./credentials.ts";

/** A decoded API response. */
export interface KubeResponse {
  status: number;
  // deno-lint-ignore no-explicit-any
  json: any;
}

/** One watch event as the API server sends it. */
export interface WatchEvent {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  // deno-lint-ignore no-explicit-any
  object: any;
}

/** A running watch; `abort` ends it (its `done` callback then runs once). */
export interface WatchHandle {
  abort(): void;
}

/** An HTTP error from the API server, with its status code (410 = resourceVersion too old). */
export class KubeError extends Error {
  constructor(readonly status: number, message: string) {
    super(message);
    this.name = "KubeError";
  }
}

/** How to reach the API server. */
export type KubeConnection = { kubeconfig: string; context?: string } | { inCluster: true };

/** The HTTP client made for one set of secrets. */
interface Connection {
  key: string;
  client: Deno.HttpClient;
  headers: Record<string, string>;
}

/** Talks JSON to one API server. */
export class KubeClient {
  /** The API server and how this client proves who it is. */
  readonly credentials: Credentials;
  readonly #idleMs: number;
  #connection?: Connection;

  constructor(connection: KubeConnection, opts: { watchIdleTimeoutMs?: number } = {}) {
    this.credentials = "inCluster" in connection
      ? inClusterCredentials()
      : kubeconfigCredentials(connection.kubeconfig, connection.context);
    // A watch with no bytes (not even a bookmark) for this long is taken as dead and reopened.
    this.#idleMs = opts.watchIdleTimeoutMs ?? 90_000;
  }

  /** The API server URL. */
  get server(): string {
    return this.credentials.server;
  }

  /** Closes the HTTP client (open watches end). */
  close(): void {
    this.#connection?.client.close();
    this.#connection = undefined;
  }

  /** The connection for the current secrets (asked every call: tokens and certificates rotate). */
  async #auth(): Promise<Connection> {
    const { ca, cert, key, headers } = await this.credentials.secrets();
    const id = `${ca}|${cert}|${key}`;
    if (this.#connection?.key !== id) {
      this.#connection?.client.close();
      this.#connection = {
        key: id,
        client: Deno.createHttpClient({
          ...(ca ? { caCerts: [ca] } : {}),
          ...(cert && key ? { cert, key } : {}),
        }),
        headers,
      };
    }
    this.#connection.headers = headers;
    return this.#connection;
  }

  async #fetch(
    method: string,
    path: string,
    body: unknown,
    contentType: string,
    signal?: AbortSignal,
  ): Promise<Response> {
    const auth = await this.#auth();
    return await fetch(this.server + path, {
      method,
      client: auth.client,
      headers: {
        ...auth.headers,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": contentType }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal,
    });
  }

  /**
   * One request; `body` is sent as JSON (`contentType` for PATCH: merge patch by default).
   * Network failures reject; HTTP errors resolve with their status (callers decide).
   */
  async request(
    method: string,
    path: string,
    body?: unknown,
    contentType = method === "PATCH" ? "application/merge-patch+json" : "application/json",
    signal?: AbortSignal,
  ): Promise<KubeResponse> {
    const res = await this.#fetch(method, path, body, contentType, signal);
    const raw = await res.text();
    let json: unknown = raw;
    try {
      json = JSON.parse(raw);
    } catch { /* not JSON */ }
    return { status: res.status, json };
  }

  /** GET that throws a KubeError unless 200. */
  async get(path: string, signal?: AbortSignal): Promise<KubeResponse["json"]> {
    const res = await this.request("GET", path, undefined, undefined, signal);
    if (res.status !== 200) throw errorOf(res, `GET ${path}`);
    return res.json;
  }

  /**
   * Opens a watch on `path` (a collection) with `params` (resourceVersion, fieldSelector, …).
   * `done` runs once when it ends: with no error when the server closed it, a KubeError when the
   * server refused it (410 etc.), or the network error. Events run in order, one line each.
   * `opened` runs when the server accepted the watch (HTTP 200).
   */
  watch(
    path: string,
    params: Record<string, string>,
    onEvent: (e: WatchEvent) => void,
    done: (err: unknown) => void,
    opened?: () => void,
  ): WatchHandle {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const idle = () => {
      clearTimeout(timer);
      timer = setTimeout(() => controller.abort(new Error("watch idle timeout")), this.#idleMs);
    };
    const query = new URLSearchParams({ ...params, watch: "true" });
    const run = async () => {
      idle();
      const res = await this.#fetch("GET", `${path}?${query}`, undefined, "", controller.signal);
      if (res.status !== 200) {
        const raw = await res.text();
        let json: unknown = raw;
        try {
          json = JSON.parse(raw);
        } catch { /* not JSON */ }
        throw errorOf({ status: res.status, json }, `watch ${path}`);
      }
      opened?.();
      let buffered = "";
      const decoder = new TextDecoder();
      for await (const chunk of res.body!) {
        idle();
        buffered += decoder.decode(chunk, { stream: true });
        let nl: number;
        while ((nl = buffered.indexOf("\n")) >= 0) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.trim()) onEvent(JSON.parse(line) as WatchEvent);
        }
      }
    };
    run().then(() => done(null), (err) => done(controller.signal.aborted ? null : err))
      .finally(() => clearTimeout(timer));
    return { abort: () => controller.abort() };
  }
}

/** A KubeError from a non-success response, with the API server's message. */
export function errorOf(res: KubeResponse, what: string): KubeError {
  const message = typeof res.json === "object" && res.json?.message
    ? res.json.message
    : String(res.json).slice(0, 200);
  return new KubeError(res.status, `${what}: HTTP ${res.status}: ${message}`);
}
