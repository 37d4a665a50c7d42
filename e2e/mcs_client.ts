/**
 * A client run inside a pod's network namespace that calls a service by name the way an
 * application does: resolves `--name` (A record) through the DNS server it is configured with
 * (`--dns ip:port`, else the system's: the pod's resolv.conf), then sends `--count` HTTP
 * requests to the first address at `--port` (the pod's capture takes them to the node proxy). Prints one JSON object: the addresses, counts by
 * echo backend (or "HTTP <status>" / the error), and the first reply's echoed request headers.
 *
 * deno run -A e2e/mcs_client.ts --name web.shop.svc.clusterset.local --dns 10.1.2.1:5353 --port 8080
 * @module
 */
import { parseArgs } from "node:util";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    name: { type: "string" },
    dns: { type: "string" },
    port: { type: "string", default: "8080" },
    path: { type: "string", default: "/" },
    count: { type: "string", default: "1" },
  },
});
// Without --dns: the pod's own resolv.conf (the system resolver).
const [dnsIp, dnsPort] = values.dns?.split(":") ?? [];
const addresses = await Deno.resolveDns(
  values.name!,
  "A",
  dnsIp ? { nameServer: { ipAddr: dnsIp, port: Number(dnsPort) } } : {},
);
/** Headers by lower-case name, several values comma-joined. */
function flatHeaders(h: Record<string, string | string[]> | undefined): Record<string, string> {
  return Object.fromEntries(
    Object.entries(h ?? {}).map(([k, v]) => [k.toLowerCase(), [v].flat().join(",")]),
  );
}

const counts: Record<string, number> = {};
let first: { status: number; headers?: Record<string, string> } | undefined;
for (let i = 0; i < Number(values.count); i++) {
  let key: string;
  try {
    const res = await fetch(`http://${addresses[0]}:${values.port}${values.path}`, {
      headers: { host: `${values.name}:${values.port}` },
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    const json = res.status === 200 ? JSON.parse(text) : undefined;
    // e2e/echo answers `backend`; echo-basic (process pods) `pod`, with headers as arrays.
    key = json ? String(json.backend ?? json.pod) : `HTTP ${res.status}`;
    first ??= { status: res.status, headers: json && flatHeaders(json.headers) };
  } catch (e) {
    key = `error ${(e as Error).name}`;
    first ??= { status: 0 };
  }
  counts[key] = (counts[key] ?? 0) + 1;
}
console.log(JSON.stringify({ addresses, counts, first }));
