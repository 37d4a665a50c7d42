/**
 * L4 test peers and clients: a line-protocol server of our own (answers each line with its name),
 * a real Redis (Debian redis-server), TCP clients, and Service + EndpointSlice objects for a
 * backend on an address:port of loopback, TCP or UDP.
 * @module
 */
import tls from "node:tls";
import { ensurePeer } from "../testbed/peers/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { freePort, waitFor } from "./harness.ts";

const enc = new TextEncoder(), dec = new TextDecoder();

/** A running backend. */
export interface L4Backend {
  name: string;
  hostname: string;
  port: number;
  close(): Promise<void>;
}

/** A line server: for each line `x` it writes `<name> x\n`; over TLS when given a certificate. */
export function startLineServer(
  name: string,
  hostname = "127.0.0.1",
  tls?: { cert: string; key: string },
): L4Backend {
  const listener = tls
    ? Deno.listenTls({ hostname, port: 0, cert: tls.cert, key: tls.key })
    : Deno.listen({ hostname, port: 0 });
  const conns = new Set<Deno.Conn>();
  const serve = async (conn: Deno.Conn) => {
    conns.add(conn);
    let buf = "";
    try {
      for await (const chunk of conn.readable) {
        buf += dec.decode(chunk);
        let nl;
        while ((nl = buf.indexOf("\n")) >= 0) {
          const line = buf.slice(0, nl);
          buf = buf.slice(nl + 1);
          await conn.write(enc.encode(`${name} ${line}\n`));
        }
      }
    } catch {
      /* client went away */
    } finally {
      conns.delete(conn);
      try {
        conn.close();
      } catch { /* closed already */ }
    }
  };
  const accepting = (async () => {
    try {
      for await (const conn of listener) serve(conn);
    } catch { /* closed */ }
  })();
  return {
    name,
    hostname,
    port: (listener.addr as Deno.NetAddr).port,
    close: async () => {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed already */ }
      }
      await accepting;
    },
  };
}

/**
 * Connects to `hostname:port`, writes `send`, and reads until `done(text)` holds or the peer
 * closes. Returns what was read ("" when the connection was refused or closed at once).
 */
export async function tcpExchange(
  hostname: string,
  port: number,
  send: string,
  done: (text: string) => boolean,
  timeoutMs = 10000,
): Promise<string> {
  let conn: Deno.Conn;
  try {
    conn = await Deno.connect({ hostname, port });
  } catch {
    return "";
  }
  const timer = setTimeout(() => {
    try {
      conn.close();
    } catch { /* closed already */ }
  }, timeoutMs);
  let text = "";
  try {
    await conn.write(enc.encode(send));
    const buf = new Uint8Array(4096);
    while (!done(text)) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += dec.decode(buf.subarray(0, n));
    }
  } catch {
    /* reset: counts as refused */
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed already */ }
  }
  return text;
}

/** A real Redis on `hostname`, no persistence. */
export async function startRedis(hostname = "127.0.0.1"): Promise<L4Backend> {
  const bin = await ensurePeer("redis-server");
  const port = freePort(hostname);
  const dir = await Deno.makeTempDir({ prefix: "aether-redis-" });
  const child = new Deno.Command(bin, {
    args: [
      "--bind",
      hostname,
      "--port",
      String(port),
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
    ],
    stdout: "null",
    stderr: "null",
  }).spawn();
  await waitFor(
    "redis-server to answer PING",
    async () =>
      (await tcpExchange(hostname, port, "PING\r\n", (t) => t.includes("\r\n"))) ===
        "+PONG\r\n",
    20000,
  );
  return {
    name: "redis",
    hostname,
    port,
    close: async () => {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** A Service `name` (port `port`, protocol TCP or UDP) whose endpoint is `backend`. */
export function l4Service(
  name: string,
  backend: { hostname: string; port: number },
  opts: { namespace?: string; port?: number; protocol?: "TCP" | "UDP" } = {},
): SourceObject[] {
  const namespace = opts.namespace ?? "default";
  const protocol = opts.protocol ?? "TCP";
  const port = opts.port ?? backend.port;
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: { ports: [{ name: "p", port, protocol, targetPort: backend.port }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: [{ name: "p", port: backend.port, protocol }],
      endpoints: [{ addresses: [backend.hostname], conditions: { ready: true } }],
    },
  ];
}

/** A TCPRoute, TLSRoute or UDPRoute. */
export function l4Route(
  kind: "TCPRoute" | "TLSRoute" | "UDPRoute",
  name: string,
  spec: Record<string, unknown>,
  namespace = "default",
): SourceObject {
  return {
    apiVersion: `gateway.networking.k8s.io/${kind === "TLSRoute" ? "v1" : "v1alpha2"}`,
    kind,
    metadata: { name, namespace, generation: 1, creationTimestamp: "2026-01-01T00:00:00Z" },
    spec,
  };
}

/** What a TLS client saw: the server certificate's names and the first line answered. */
export interface TlsExchange {
  /** Subject CN of the server certificate ("" when the handshake failed). */
  cn: string;
  /** Whether the certificate verified against `ca` for `servername`. */
  authorized: boolean;
  /** The first answered line, or the error that ended the connection. */
  line: string;
  error?: string;
}

/** A TLS connection to 127.0.0.1:`port` with SNI `servername`, sending one line. */
export function tlsExchange(
  port: number,
  servername: string,
  ca: string[],
  send: string,
  timeoutMs = 10000,
): Promise<TlsExchange> {
  return new Promise((done) => {
    const out: TlsExchange = { cn: "", authorized: false, line: "" };
    const socket = tls.connect({
      host: "127.0.0.1",
      port,
      servername,
      ca,
      rejectUnauthorized: false,
    });
    const timer = setTimeout(() => finish("timed out"), timeoutMs);
    let text = "", finished = false;
    const finish = (error?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      if (error && !out.line) out.error = error;
      socket.destroy();
      done(out);
    };
    socket.on("secureConnect", () => {
      out.cn = String(socket.getPeerCertificate()?.subject?.CN ?? "");
      out.authorized = socket.authorized;
      socket.write(send);
    });
    socket.on("data", (d: Uint8Array) => {
      text += dec.decode(d);
      if (text.includes("\n")) {
        out.line = text.slice(0, text.indexOf("\n") + 1);
        finish();
      }
    });
    socket.on("error", (e: Error) => finish(e.message));
    socket.on("close", () => finish("closed"));
  });
}
