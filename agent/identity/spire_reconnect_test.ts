/**
 * Re-subscription once SPIRE is back keeps the documented backoff (200 ms doubling to 5 s, ±20 %
 * jitter), however long SPIRE was away: the SPIRE agent is stopped for 45 s, long enough for a
 * gRPC channel's own reconnect backoff (1 s growing 1.6× to 120 s) to outgrow ours, then started;
 * the Delegated Identity bundles stream and the Workload API stream are up again within the cap
 * plus slack for a loaded machine.
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { startSpire } from "../../e2e/spire.ts";
import { waitFor } from "../../e2e/peers/proc.ts";
import { NodeIdentities } from "./node_identities.ts";
import { WorkloadApiClient } from "./workload.ts";
import { identitySelectors } from "./mesh_identity.ts";

const OUTAGE_MS = 45_000;
/** The backoff cap with its jitter (5 s + 20 %), plus slack for a loaded 2-core machine. */
const BOUND_MS = 6_000 + 6_000;

Deno.test("identity: streams are back within the backoff cap after a long SPIRE outage", async () => {
  const spire = await startSpire();
  const logger = new Logger("test", () => {});
  const workload = new WorkloadApiClient({ socket: spire.socket, logger, onUpdate: () => {} });
  const node = new NodeIdentities({
    adminSocket: spire.adminSocket,
    logger,
    metrics: new Registry(),
    onChange: () => {},
  });
  try {
    const id = await spire.registerPod("a", "client");
    node.setWanted([{ spiffeId: id, selectors: identitySelectors("a", "client") }]);
    await waitFor("SVID", () => Promise.resolve(node.svid(id)), 90_000, spire.procs);
    await waitFor("streams up", () => {
      return Promise.resolve(node.connected && workload.connected || undefined);
    }, 60_000);

    await spire.stopAgent();
    await waitFor("streams down", () => {
      return Promise.resolve(!node.connected && !workload.connected || undefined);
    }, 60_000);
    await new Promise((r) => setTimeout(r, OUTAGE_MS));
    await spire.startAgent();
    const back = Date.now();
    const up = await waitFor("streams up again", () => {
      return Promise.resolve(node.connected && workload.connected ? Date.now() : undefined);
    }, 120_000);
    const ms = up - back;
    console.log(`re-subscription: streams up ${(ms / 1000).toFixed(1)} s after SPIRE was back`);
    assert.ok(ms <= BOUND_MS, `streams up only ${(ms / 1000).toFixed(1)} s after SPIRE was back`);
  } finally {
    workload.close();
    node.close();
    await spire.stop();
  }
});
