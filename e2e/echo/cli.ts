/**
 * The echo server as a process, for running inside a pod's network namespace
 * (`ip netns exec <ns> deno run -A e2e/echo/cli.ts --name b --hostname 10.1.2.3 --port 9090`).
 * With `--cert`/`--key` (PEM files) it serves HTTPS. Prints `listening <port>` when ready.
 * @module
 */
import { parseArgs } from "node:util";
import { startEcho } from "./server.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    name: { type: "string", default: "echo" },
    hostname: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "0" },
    cert: { type: "string" },
    key: { type: "string" },
  },
});
if (values.cert && values.key) {
  const server = Deno.serve({
    hostname: values.hostname,
    port: Number(values.port),
    cert: Deno.readTextFileSync(values.cert),
    key: Deno.readTextFileSync(values.key),
    onListen: (a) => console.log(`listening ${a.port}`),
  }, () =>
    new Response(JSON.stringify({ backend: values.name }), {
      headers: { "content-type": "application/json" },
    }));
  await server.finished;
} else {
  const echo = await startEcho(values.name!, values.hostname, Number(values.port));
  console.log(`listening ${echo.port}`);
}
