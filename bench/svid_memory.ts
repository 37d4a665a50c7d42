/**
 * The agent's memory for N identities' SVIDs, in a process of its own (so its RSS is the identity
 * code's, not a bench's): `NodeIdentities` on a SPIRE agent's admin socket subscribes to N
 * registered identities (one Delegated Identity stream each) and waits for all N SVIDs. Prints
 * one JSON line: RSS and V8 heap (after GC) at start, once connected with the bundles (before)
 * and with all N SVIDs (after). Started by bench/mtls_hop.ts.
 *
 * deno run -A --v8-flags=--expose-gc bench/svid_memory.ts --admin-socket <sock> \
 *   --trust-domain <td> --namespace m --count 100
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { identitySelectors, NodeIdentities } from "../agent/identity/mod.ts";
import { waitFor } from "../e2e/peers/proc.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    "admin-socket": { type: "string" },
    "trust-domain": { type: "string" },
    namespace: { type: "string", default: "m" },
    count: { type: "string", default: "100" },
  },
});
const n = Number(values.count), ns = values.namespace!;
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 200));
  }
  return Deno.memoryUsage();
};
const start = await settle();
const ids = new NodeIdentities({
  adminSocket: values["admin-socket"]!,
  logger: new Logger("bench", () => {}),
  metrics: new Registry(),
  onChange: () => {},
});
// The baseline: connected, the bundles stream up, no identity yet (the fixed cost of the client).
await waitFor(
  "trust bundles",
  () => Promise.resolve(ids.bundles().length > 0 || undefined),
  60_000,
);
const before = await settle();
ids.setWanted(Array.from({ length: n }, (_, i) => ({
  spiffeId: `spiffe://${values["trust-domain"]}/ns/${ns}/sa/sa-${i}`,
  selectors: identitySelectors(ns, `sa-${i}`),
})));
await waitFor(`${n} SVIDs`, () => Promise.resolve(ids.svids().length === n || undefined), 180_000);
const after = await settle();
ids.close();
const kib = (b: number) => Math.round(b / 1024);
console.log(JSON.stringify({
  identities: n,
  svids: n,
  rssStartKiB: kib(start.rss),
  rssBeforeKiB: kib(before.rss),
  rssAfterKiB: kib(after.rss),
  heapBeforeKiB: kib(before.heapUsed),
  heapAfterKiB: kib(after.heapUsed),
  rssKiBPer100: Math.round(kib(after.rss - before.rss) * (100 / n)),
  heapKiBPer100: Math.round(kib(after.heapUsed - before.heapUsed) * (100 / n)),
}));
Deno.exit(0);
