/**
 * A load client in its own process (a pod's network namespace, or the host): `startLoad` against
 * `--port` on loopback, cycling the `--host` values (repeatable), until a stop file appears (or
 * `--max-seconds`), then one JSON line with the counts. With `--ready-file`, that file is written
 * once every connection has had an answer, so a caller knows the load is running.
 * Started through `spawnLoad` (load_process.ts).
 *
 * deno run -A e2e/mesh_load.ts --host web.aether.internal --stop-file /tmp/x [--port 18081]
 */
import { parseArgs } from "node:util";
import { startLoad } from "./load.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    host: { type: "string", multiple: true },
    port: { type: "string", default: "18081" },
    concurrency: { type: "string", default: "8" },
    "stop-file": { type: "string" },
    "ready-file": { type: "string" },
    "max-seconds": { type: "string", default: "300" },
  },
});
const concurrency = Number(values.concurrency);
const load = startLoad({
  port: Number(values.port),
  authorities: values.host!,
  concurrency,
  maxSeconds: Number(values["max-seconds"]),
});
const deadline = Date.now() + Number(values["max-seconds"]) * 1000;
let ready = !values["ready-file"];
while (Date.now() < deadline) {
  if (await Deno.stat(values["stop-file"]!).then(() => true, () => false)) break;
  if (!ready && load.sent() >= concurrency) {
    await Deno.writeTextFile(values["ready-file"]!, String(load.sent()));
    ready = true;
  }
  await new Promise((r) => setTimeout(r, 100));
}
const r = await load.stop();
console.log(JSON.stringify({ ...r, failures: Object.fromEntries(r.failures) }));
