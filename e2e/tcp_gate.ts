/**
 * A loopback TCP forwarder a test can shut and open again on the same port: shut, it listens on
 * nothing (connections are refused) and every forwarded connection is cut, as when a peer becomes
 * unreachable; the peer behind it stays reachable for the test itself.
 * @module
 */
import { freePort } from "../testbed/free_port.ts";

/** A forwarder from `url` to a target port. */
export interface TcpGate {
  /** `http://127.0.0.1:<port>` of the forwarder. */
  url: string;
  /** Refuses new connections and cuts the open ones. */
  shut(): void;
  /** Listens (on the same port) and forwards again. */
  open(): void;
  /** Shuts for good. */
  close(): void;
}

/** A gate to `127.0.0.1:<targetPort>`, open. */
export function tcpGate(targetPort: number): TcpGate {
  const port = freePort();
  const conns = new Set<Deno.Conn>();
  let listener: Deno.Listener | undefined;
  const forward = async (client: Deno.Conn) => {
    conns.add(client);
    let upstream: Deno.Conn | undefined;
    try {
      upstream = await Deno.connect({ hostname: "127.0.0.1", port: targetPort });
      conns.add(upstream);
      await Promise.all([
        client.readable.pipeTo(upstream.writable),
        upstream.readable.pipeTo(client.writable),
      ]);
    } catch {
      /* either side went away: cut both */
    } finally {
      for (const c of [client, upstream]) {
        if (!c) continue;
        conns.delete(c);
        try {
          c.close();
        } catch { /* closed */ }
      }
    }
  };
  const shut = () => {
    try {
      listener?.close();
    } catch { /* closed */ }
    listener = undefined;
    for (const c of [...conns]) {
      conns.delete(c);
      try {
        c.close();
      } catch { /* closed */ }
    }
  };
  const open = () => {
    if (listener) return;
    const l = Deno.listen({ hostname: "127.0.0.1", port });
    listener = l;
    (async () => {
      try {
        for await (const c of l) forward(c);
      } catch { /* shut */ }
    })();
  };
  open();
  return { url: `http://127.0.0.1:${port}`, shut, open, close: shut };
}
