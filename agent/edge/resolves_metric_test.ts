/**
 * The standalone agent's `/metrics` counts its resolves by path: the first revision cold, a
 * route's edit on the edit path (lib/gatewayapi/edit.ts), a new route for a new host on the add
 * path (lib/gatewayapi/add_edit.ts), a route deleted on the remove path (remove_edit.ts). No
 * Envoy here (`envoy: "none"`).
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { MemorySource } from "../../testbed/memory_source.ts";
import { syntheticConfig, syntheticRoute } from "../../testbed/fixtures/synthetic_config.ts";
import { runStandalone, standaloneDefaults } from "./mod.ts";

Deno.test("standalone agent: /metrics has aether_resolves_total by path", async () => {
  const source = new MemorySource(syntheticConfig({ services: 3, routes: 3, port: 10080 }));
  const agent = await runStandalone({
    ...standaloneDefaults,
    envoy: "none",
    source,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    nodeId: "resolves-metric",
    logger: new Logger("agent", () => {}, "error"),
  });
  try {
    source.apply(syntheticRoute(1, 3, 1));
    source.apply(syntheticRoute(3, 3));
    source.remove(syntheticRoute(0, 3));
    const res = await fetch(`http://${agent.admin.address}/metrics`);
    const text = await res.text();
    assert.match(text, /^aether_resolves_total\{path="cold"\} 1$/m);
    assert.match(text, /^aether_resolves_total\{path="edit"\} 1$/m);
    assert.match(text, /^aether_resolves_total\{path="add"\} 1$/m);
    assert.match(text, /^aether_resolves_total\{path="remove"\} 1$/m);
  } finally {
    await agent.close();
  }
});
