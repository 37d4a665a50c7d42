/**
 * The upstream MCS conformance suite's `hello` pod as a process for a pod's network namespace
 * (its `alpine/socat` containers: `socat tcp-l:42,fork exec:'echo pod ip $MY_POD_IP'`): on every
 * TCP connection to one of `--port` it writes `pod ip <ip>` and closes. Prints `listening` once
 * every port is bound.
 *
 * ip netns exec <ns> deno run -A e2e/mcs_hello.ts --ip 10.1.2.3 --port 42 --port 4242
 * @module
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: { ip: { type: "string" }, port: { type: "string", multiple: true } },
});
const ip = values.ip!;
const reply = new TextEncoder().encode(`pod ip ${ip}\n`);

async function serve(listener: Deno.TcpListener): Promise<void> {
  for await (const conn of listener) {
    conn.write(reply).catch(() => {}).finally(() => conn.close());
  }
}

const listeners = (values.port ?? []).map((p) => Deno.listen({ hostname: ip, port: Number(p) }));
console.log("listening");
await Promise.all(listeners.map(serve));
