/**
 * The programs the capture tests run inside pod network namespaces (`ip netns exec <ns> deno
 * run -A agent/node/_capture_probe_test_utils.ts <command> …`). Not part of the agent.
 *
 * - `serve <name> <ip>`: a backend pod's servers on its IP, then prints `ready`: HTTP on 8080
 *   (HTTP/1.1 and h2c; body `backend <name> <path>`, plus ` from <SPIFFE ID>` when the request
 *   came over mesh mTLS (XFCC); header `x-backend: <name>`), gRPC on 7070
 *   (every unary method answers `{"backend": <name>}`), a TCP echo on 6000 (each line back, as
 *   `<name>: <line>`), and on 6001 a server that speaks first (`hello from <name>`, then echoes).
 * - `tcp <host> <port> <line>`: sends the line, prints the first line answered.
 * - `greet <host> <port>`: sends nothing, prints the first line the server sends.
 * - `grpc <host:port> <authority> <n>`: `n` unary calls on one channel (one HTTP/2 connection),
 *   prints the backends' counts as JSON.
 * @module
 */
import * as grpc from "@grpc/grpc-js";

/** The backend ports of `serve`. */
export const PROBE_PORTS = { http: 8080, grpc: 7070, echo: 6000, greet: 6001 } as const;

const json = {
  serialize: (v: unknown) => Buffer.from(JSON.stringify(v)),
  deserialize: (b: Buffer) => JSON.parse(b.toString() || "{}"),
};

/** The gRPC method the probe calls and serves. */
const METHOD = "/aether.test.Echo/Call";

async function readLine(conn: Deno.Conn): Promise<string> {
  const buf = new Uint8Array(4096);
  let text = "";
  while (!text.includes("\n")) {
    const n = await conn.read(buf);
    if (n === null) break;
    text += new TextDecoder().decode(buf.subarray(0, n));
  }
  return text.split("\n")[0];
}

async function lines(conn: Deno.Conn, answer: (line: string) => string): Promise<void> {
  const buf = new Uint8Array(4096);
  let pending = "";
  try {
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      pending += new TextDecoder().decode(buf.subarray(0, n));
      let i;
      while ((i = pending.indexOf("\n")) >= 0) {
        await conn.write(new TextEncoder().encode(answer(pending.slice(0, i)) + "\n"));
        pending = pending.slice(i + 1);
      }
    }
  } catch { /* the peer went away */ }
  try {
    conn.close();
  } catch { /* closed */ }
}

async function acceptAll(l: Deno.Listener, each: (c: Deno.Conn) => Promise<void>) {
  for await (const c of l) each(c).catch(() => {});
}

async function serve(name: string, ip: string): Promise<void> {
  Deno.serve({ hostname: ip, port: PROBE_PORTS.http, onListen: () => {} }, (req) => {
    // Over mesh mTLS the inbound side says who called (XFCC `URI=<caller's SPIFFE ID>`).
    const caller = /URI=([^;,]+)/.exec(req.headers.get("x-forwarded-client-cert") ?? "")?.[1];
    const from = caller ? ` from ${caller}` : "";
    return new Response(`backend ${name} ${new URL(req.url).pathname}${from}`, {
      headers: { "x-backend": name },
    });
  });
  const server = new grpc.Server();
  server.addService({
    Call: {
      path: METHOD,
      requestStream: false,
      responseStream: false,
      requestSerialize: json.serialize,
      requestDeserialize: json.deserialize,
      responseSerialize: json.serialize,
      responseDeserialize: json.deserialize,
    },
  }, { Call: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => cb(null, { backend: name }) });
  await new Promise<void>((resolve, reject) =>
    server.bindAsync(
      `${ip}:${PROBE_PORTS.grpc}`,
      grpc.ServerCredentials.createInsecure(),
      (err) => err ? reject(err) : resolve(),
    )
  );
  acceptAll(
    Deno.listen({ hostname: ip, port: PROBE_PORTS.echo }),
    (c) => lines(c, (line) => `${name}: ${line}`),
  );
  acceptAll(Deno.listen({ hostname: ip, port: PROBE_PORTS.greet }), async (c) => {
    await c.write(new TextEncoder().encode(`hello from ${name}\n`));
    await lines(c, (line) => `${name}: ${line}`);
  });
  console.log("ready");
  await new Promise(() => {});
}

async function grpcCalls(target: string, authority: string, n: number): Promise<void> {
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
    "grpc.default_authority": authority,
  });
  const counts: Record<string, number> = {};
  for (let i = 0; i < n; i++) {
    const reply = await new Promise<{ backend: string }>((resolve, reject) =>
      client.makeUnaryRequest(
        METHOD,
        json.serialize,
        json.deserialize,
        {},
        new grpc.Metadata(),
        { deadline: Date.now() + 10_000 },
        (err, r) => err ? reject(err) : resolve(r as { backend: string }),
      )
    );
    counts[reply.backend] = (counts[reply.backend] ?? 0) + 1;
  }
  client.close();
  console.log(JSON.stringify(counts));
}

if (import.meta.main) {
  const [command, ...args] = Deno.args;
  if (command === "serve") await serve(args[0], args[1]);
  else if (command === "tcp" || command === "greet") {
    const conn = await Deno.connect({ hostname: args[0], port: Number(args[1]) });
    if (command === "tcp") await conn.write(new TextEncoder().encode(`${args[2]}\n`));
    console.log(await readLine(conn));
    conn.close();
  } else if (command === "grpc") await grpcCalls(args[0], args[1], Number(args[2]));
  else throw new Error(`unknown command ${command}`);
}
