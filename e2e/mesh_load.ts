/**
 * A load client run inside a pod: `startLoad` against the node proxy's egress listener until a
 * stop file appears (or `--max-seconds`), then one JSON line with the counts.
 *
 * deno run -A e2e/mesh_load.ts --host web.aether.internal --stop-file /tmp/x [--port 18081]
 */
import { parseArgs } from "node:util";
import { startLoad } from "./load.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    host: { type: "string" },
    port: { type: "string", default: "18081" },
    "stop-file": { type: "string" },
    "max-seconds": { type: "string", default: "300" },
  },
});
const load = startLoad({
  port: Number(values.port),
  authorities: [values.host!],
  maxSeconds: Number(values["max-seconds"]),
});
const deadline = Date.now() + Number(values["max-seconds"]) * 1000;
while (Date.now() < deadline) {
  if (await Deno.stat(values["stop-file"]!).then(() => true, () => false)) break;
  await new Promise((r) => setTimeout(r, 100));
}
const r = await load.stop();
console.log(JSON.stringify({ ...r, failures: Object.fromEntries(r.failures) }));
