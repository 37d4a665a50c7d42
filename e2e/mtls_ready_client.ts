/**
 * Run inside a captured pod's netns: for each target (`--target <name>=<vip>`, port 8080, Host
 * `<name>.<namespace>:8080`) polls until the answer carries XFCC naming
 * `spiffe://<td>/ns/<namespace>/sa/<name>` (the pod serves mTLS with its own SVID), and prints one
 * JSON line: each target's milliseconds from the start, the targets never reached within
 * `--seconds`, and what each of those answered last (`lastSeen`: an error, a status, or the
 * XFCC it carried), so a failure says where it stopped.
 *
 * deno run -A e2e/mtls_ready_client.ts --namespace app --trust-domain cluster.local \
 *   --target burst-0=10.96.0.12 --seconds 300
 * @module
 */
import { parseArgs } from "node:util";
import { request } from "./http_client.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    namespace: { type: "string" },
    "trust-domain": { type: "string", default: "cluster.local" },
    target: { type: "string", multiple: true, default: [] },
    seconds: { type: "string", default: "300" },
  },
});
const ns = values.namespace!, td = values["trust-domain"]!;
const start = performance.now(), deadline = start + Number(values.seconds) * 1000;
const pending = new Map(values.target!.map((t) => t.split("=") as [string, string]));
const readyMs: Record<string, number> = {};
/** Per target, its last answer when it was not (yet) the expected one. */
const lastSeen: Record<string, string> = {};

/** Whether `name` answered over mTLS with its own identity. */
async function served(name: string, vip: string): Promise<boolean> {
  const r = await request({
    host: vip,
    port: 8080,
    authority: `${name}.${ns}:8080`,
    path: "/mtls-ready",
    timeoutMs: 2000,
  }).catch((e) => String(e));
  if (typeof r === "string" || r.status !== 200) {
    lastSeen[name] = typeof r === "string" ? `error: ${r}` : `${r.status}: ${r.body.slice(0, 120)}`;
    return false;
  }
  const headers = (r.json?.headers ?? {}) as Record<string, unknown>;
  const xfcc = Object.entries(headers).find(([h]) => h.toLowerCase() === "x-forwarded-client-cert");
  const seen = String([xfcc?.[1]].flat()[0]);
  lastSeen[name] = `200, XFCC ${seen.slice(0, 160)}`;
  return seen.startsWith(`By=spiffe://${td}/ns/${ns}/sa/${name};`);
}

while (pending.size && performance.now() < deadline) {
  await Promise.all([...pending].map(async ([name, vip]) => {
    if (await served(name, vip)) {
      readyMs[name] = Math.round(performance.now() - start);
      pending.delete(name);
    }
  }));
  if (pending.size) await new Promise((r) => setTimeout(r, 250));
}
const missing = [...pending.keys()];
console.log(JSON.stringify({
  readyMs,
  missing,
  lastSeen: Object.fromEntries(missing.map((n) => [n, lastSeen[n] ?? "no answer yet"])),
}));
