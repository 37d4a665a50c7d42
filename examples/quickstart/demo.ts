/**
 * `deno task demo`: runs the standalone agent with Envoy on this folder's YAML, starts the two
 * echo backends it routes to, and shows the 90/10 split and the header match with real requests.
 * Pass --keep to leave everything running for your own curl commands (Ctrl-C stops).
 */
import { parseArgs } from "node:util";
import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { startEcho } from "../../e2e/echo/server.ts";
import { countBy, request } from "../../e2e/http_client.ts";
import { Logger } from "../../lib/log/mod.ts";
import { runStandalone, standaloneDefaults } from "../../agent/edge/mod.ts";

const { values } = parseArgs({ args: Deno.args, options: { keep: { type: "boolean" } } });
const here = dirname(fileURLToPath(import.meta.url));
const gatewayPort = 18080;
const host = "echo.example.com";

console.log("aether demo: starting echo backends on 127.0.0.11:9001 (v1) and 127.0.0.12:9001 (v2)");
const backends = [
  await startEcho("echo-v1", "127.0.0.11", 9001),
  await startEcho("echo-v2", "127.0.0.12", 9001),
];
console.log("starting the standalone agent and Envoy (installing Envoy into .cache/ if needed) …");
const agent = await runStandalone({
  ...standaloneDefaults,
  config: here,
  logger: new Logger("agent", () => {}, "error"),
});
await agent.waitReady(30000);
console.log(
  `ready: admin on http://${agent.admin.address} (/readyz /status /debug/xds /metrics)\n`,
);

const total = 1000;
const counts = await countBy(
  total,
  () => ({ port: gatewayPort, authority: host, path: "/hello" }),
  (r) => (r.status === 200 ? String(r.json?.backend) : `HTTP ${r.status}`),
);
console.log(`${total} requests to http://${host}/hello (route: 90/10 split):`);
for (const [k, v] of [...counts].sort()) {
  console.log(`  ${k.padEnd(8)} ${v} (${((100 * v) / total).toFixed(1)}%)`);
}

const canary = await request({
  port: gatewayPort,
  authority: host,
  headers: { "x-canary": "always" },
});
console.log(`\nwith header x-canary: always → ${canary.json?.backend} (HTTP ${canary.status})`);

const tryIt = `  curl -s -H 'Host: ${host}' http://127.0.0.1:${gatewayPort}/hello
  curl -s -H 'Host: ${host}' -H 'x-canary: always' http://127.0.0.1:${gatewayPort}/
  curl -s http://${agent.admin.address}/status`;

if (values.keep) {
  console.log(`\nStill running (--keep). Try it yourself:\n${tryIt}`);
  console.log("\nEdit examples/quickstart/*.yaml to see changes applied live. Ctrl-C stops.");
  const stop = async () => {
    await agent.close();
    for (const b of backends) await b.close();
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", stop);
  Deno.addSignalListener("SIGTERM", stop);
} else {
  await agent.close();
  for (const b of backends) await b.close();
  console.log(
    `\nThe demo has stopped the agent, Envoy and the backends. To keep them running and try it
yourself, run \`deno task demo --keep\`, then:\n${tryIt}`,
  );
  const v1 = counts.get("echo-v1") ?? 0;
  if (v1 < total * 0.85 || v1 > total * 0.95 || canary.json?.backend !== "echo-v2") {
    console.error("demo: the split or the header match is not what the route says");
    Deno.exit(1);
  }
}
