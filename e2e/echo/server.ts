/**
 * The echo backend used by end-to-end tests and the demo: answers every request with JSON naming
 * the backend and echoing method, path, query and headers. Request headers steer it:
 * `x-echo-delay-ms` (answer late), `x-echo-status` (answer with that status),
 * `x-echo-set-<name>` (add a response header `<name>`), `x-echo-fail-times: N` with
 * `x-echo-fail-key: K` (answer 503 to the first N requests carrying key K — for retry tests).
 * Every request is remembered in `requests`.
 * @module
 */

/** What the echo server saw and answers with. */
export interface EchoReply {
  backend: string;
  method: string;
  path: string;
  query: string;
  host: string;
  headers: Record<string, string>;
}

/** A running echo server. */
export interface EchoServer {
  name: string;
  hostname: string;
  port: number;
  requests: EchoReply[];
  close(): Promise<void>;
}

/** Starts an echo server named `name` on hostname:port (port 0 = ephemeral). */
export function startEcho(name: string, hostname = "127.0.0.1", port = 0): Promise<EchoServer> {
  const requests: EchoReply[] = [];
  const failures = new Map<string, number>();
  return new Promise((resolveStarted) => {
    const server = Deno.serve({
      hostname,
      port,
      onListen: (addr) => {
        resolveStarted({
          name,
          hostname,
          port: addr.port,
          requests,
          close: async () => {
            await server.shutdown();
          },
        });
      },
    }, async (req) => {
      const url = new URL(req.url);
      const headers: Record<string, string> = {};
      req.headers.forEach((v, k) => (headers[k] = v));
      const reply: EchoReply = {
        backend: name,
        method: req.method,
        path: url.pathname,
        query: url.search,
        host: req.headers.get("host") ?? "",
        headers,
      };
      requests.push(reply);
      const delay = Number(req.headers.get("x-echo-delay-ms") ?? 0);
      if (delay > 0) await new Promise((r) => setTimeout(r, delay));
      let status = Number(req.headers.get("x-echo-status") ?? 200);
      const failKey = req.headers.get("x-echo-fail-key");
      if (failKey) {
        const seen = (failures.get(failKey) ?? 0) + 1;
        failures.set(failKey, seen);
        if (seen <= Number(req.headers.get("x-echo-fail-times") ?? 0)) status = 503;
      }
      const out = new Headers({ "content-type": "application/json", "x-echo-backend": name });
      req.headers.forEach((v, k) => {
        if (k.startsWith("x-echo-set-")) out.set(k.slice("x-echo-set-".length), v);
      });
      await req.body?.cancel();
      return new Response(JSON.stringify(reply), { status, headers: out });
    });
  });
}

if (import.meta.main) {
  const [name = "echo", hostname = "127.0.0.1", port = "8080"] = Deno.args;
  const s = await startEcho(name, hostname, Number(port));
  console.log(`echo ${s.name} listening on ${s.hostname}:${s.port}`);
}
