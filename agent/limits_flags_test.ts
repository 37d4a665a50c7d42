import assert from "node:assert/strict";
import { limitsFromFlags, parseDurationMs } from "./limits_flags.ts";
import { edgeLimitDefaults } from "./xds/translate/mod.ts";

Deno.test("limit flags: defaults, durations, bad values name the flag", () => {
  const none = limitsFromFlags({});
  assert.deepEqual(none.edgeLimits, edgeLimitDefaults);
  assert.equal(none.maxDownstreamConnections, 50_000);
  assert.equal(none.keepEnvoy, false);
  assert.equal(none.scopedRoutesAt, 2000);
  assert.equal(none.scopedRoutesOnDemand, false);
  assert.equal(parseDurationMs("x", "250ms"), 250);
  assert.equal(parseDurationMs("x", "1.5s"), 1500);
  assert.equal(parseDurationMs("x", "5m"), 300_000);
  assert.equal(parseDurationMs("x", "0"), 0);
  const set = limitsFromFlags({
    "headers-with-underscores": "drop",
    "request-headers-timeout": "2s",
    "http2-max-concurrent-streams": "10",
    "max-downstream-connections": "3",
    "keep-envoy": true,
    "state-dir": "/tmp/x",
    "scoped-routes-at": "0",
    "scoped-routes-on-demand": true,
  });
  assert.equal(set.edgeLimits.headersWithUnderscores, "drop");
  assert.equal(set.edgeLimits.requestHeadersTimeoutMs, 2000);
  assert.equal(set.edgeLimits.http2MaxConcurrentStreams, 10);
  assert.equal(set.maxDownstreamConnections, 3);
  assert.equal(set.keepEnvoy, true);
  assert.equal(set.stateDir, "/tmp/x");
  assert.equal(set.scopedRoutesAt, 0);
  assert.equal(set.scopedRoutesOnDemand, true);
  assert.throws(
    () => limitsFromFlags({ "request-headers-timeout": "soon" }),
    /request-headers-timeout/,
  );
  assert.throws(() => limitsFromFlags({ "headers-with-underscores": "maybe" }), /underscores/);
  assert.throws(() => limitsFromFlags({ "http2-initial-stream-window": "10" }), /stream window/);
  assert.throws(() => limitsFromFlags({ "max-downstream-connections": "-1" }), /whole number/);
  assert.throws(() => limitsFromFlags({ "scoped-routes-at": "many" }), /scoped-routes-at/);
});
