/**
 * A probe run inside a test netns (`ip netns exec <ns> deno run -A --unstable-net probe.ts
 * '<json>'`): opens the listeners (each answers its name: TCP writes it and closes, UDP sends it
 * back), then makes each connection and prints, as one JSON line, which listener answered each
 * (or the error). All addresses are the netns's own, so a connection either lands or is refused
 * at once; a UDP reply is awaited at most 10 s.
 */
interface Listen {
  proto: "tcp" | "udp";
  host: string;
  port: number;
  name: string;
}
interface Connect {
  proto: "tcp" | "udp";
  host: string;
  port: number;
}

const { listen, connect } = JSON.parse(Deno.args[0]) as { listen: Listen[]; connect: Connect[] };
const enc = new TextEncoder(), dec = new TextDecoder();
const closers: (() => void)[] = [];

for (const l of listen) {
  if (l.proto === "tcp") {
    const server = Deno.listen({ hostname: l.host, port: l.port });
    closers.push(() => server.close());
    (async () => {
      for await (const conn of server) {
        await conn.write(enc.encode(l.name)).catch(() => {});
        conn.close();
      }
    })().catch(() => {});
  } else {
    const sock = Deno.listenDatagram({ transport: "udp", hostname: l.host, port: l.port });
    closers.push(() => sock.close());
    (async () => {
      for await (const [, from] of sock) await sock.send(enc.encode(l.name), from);
    })().catch(() => {});
  }
}

async function tcp(c: Connect): Promise<string> {
  const conn = await Deno.connect({ hostname: c.host, port: c.port });
  const chunks: Uint8Array[] = [];
  const buf = new Uint8Array(256);
  for (;;) {
    const n = await conn.read(buf);
    if (n === null) break;
    chunks.push(buf.slice(0, n));
  }
  conn.close();
  return chunks.map((b) => dec.decode(b)).join("");
}

async function udp(c: Connect): Promise<string> {
  const sock = Deno.listenDatagram({
    transport: "udp",
    hostname: c.host.includes(":") ? "::" : "0.0.0.0",
    port: 0,
  });
  try {
    await sock.send(enc.encode("?"), { transport: "udp", hostname: c.host, port: c.port });
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error("no reply in 10 s")), 10_000);
    });
    const [data] = await Promise.race([sock.receive(), timeout]);
    clearTimeout(timer);
    return dec.decode(data);
  } finally {
    sock.close();
  }
}

const results: Record<string, string> = {};
for (const c of connect) {
  const target = `${c.proto} ${c.host.includes(":") ? `[${c.host}]` : c.host}:${c.port}`;
  try {
    results[target] = await (c.proto === "tcp" ? tcp(c) : udp(c));
  } catch (e) {
    results[target] = `error: ${(e as Error).message}`;
  }
}
console.log(JSON.stringify(results));
for (const close of closers) close();
Deno.exit(0);
