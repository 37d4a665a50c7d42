/**
 * One cluster's registrar as its own process, for tests that SIGKILL it: publishes the JSON map
 * given on stdin (`{"<key in the origin>": "<value>"}`) to origin `<region>/<cluster>` of the
 * registry at `<url>` with a lease of `<ttl>` seconds, prints `published`, and keeps the lease
 * alive until killed.
 *
 *   deno run -A e2e/registry_writer_process.ts <url> <region> <cluster> <ttl> < map.json
 */
import { Logger } from "../lib/log/mod.ts";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";

const [url, region, cluster, ttl] = Deno.args;
const desired = new Map(
  Object.entries(
    JSON.parse(await new Response(Deno.stdin.readable).text()) as Record<string, string>,
  ),
);
const writer = new OriginWriter({
  kv: new EtcdKv({ url }),
  origin: { region, cluster },
  writer: `${cluster}-process`,
  ttlSeconds: Number(ttl),
  logger: new Logger("registrar", () => {}, "error"),
});
await writer.publish(desired);
console.log("published");
await new Promise(() => {});
