/**
 * A client run inside a pod's network namespace: sends requests to the node proxy's explicit
 * egress listener (127.0.0.1:18081 by default) with a mesh Host, and prints one JSON object:
 * counts by echo backend (or "HTTP <status>"), plus the first reply.
 *
 * deno run -A e2e/mesh_client.ts --host svc-1.aether.internal --path / --count 1000 [--header k=v]…
 */
import { parseArgs } from "node:util";
import { countBy, request } from "./http_client.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    host: { type: "string" },
    path: { type: "string", default: "/" },
    method: { type: "string", default: "GET" },
    count: { type: "string", default: "1" },
    port: { type: "string", default: "18081" },
    header: { type: "string", multiple: true },
  },
});
const headers = Object.fromEntries((values.header ?? []).map((h) => {
  const i = h.indexOf("=");
  return [h.slice(0, i), h.slice(i + 1)];
}));
const req = {
  port: Number(values.port),
  authority: values.host!,
  path: values.path!,
  method: values.method!,
  headers,
};
const first = await request({ ...req, timeoutMs: 15000 });
const counts = await countBy(
  Number(values.count) - 1,
  () => req,
  (r) => (r.status === 200 ? String(r.json?.backend) : `HTTP ${r.status}`),
);
const key = first.status === 200 ? String(first.json?.backend) : `HTTP ${first.status}`;
counts.set(key, (counts.get(key) ?? 0) + 1);
console.log(JSON.stringify({ counts: Object.fromEntries(counts), first }));
