import assert from "node:assert/strict";
import { mcsFlags, podWebhookFlags, positive, seconds, wholeNumber } from "./flags.ts";

Deno.test("controller flags: the clusterset group — registry, origin and east-west gateway", () => {
  assert.deepEqual(mcsFlags({}), {});
  const on = mcsFlags({
    "registry-url": "http://127.0.0.1:2379",
    region: "eu",
    cluster: "b",
    "east-west-gateway": "10.0.0.7:15443",
    "trust-domain": "cluster.local",
  });
  assert.ok(on.mcs);
  assert.deepEqual(on.mcs.origin, { region: "eu", cluster: "b" });
  assert.equal(on.mcs.eastWestGateway, "10.0.0.7:15443");
  assert.equal(on.mcs.trustDomain, "cluster.local");
  assert.equal(on.mcs.ttlSeconds, 10);
  // Without a gateway no endpoint carries one.
  const flat = mcsFlags({ "registry-url": "http://127.0.0.1:2379", region: "eu", cluster: "b" });
  assert.equal(flat.mcs && "eastWestGateway" in flat.mcs, false);
  assert.equal(
    mcsFlags({
      "registry-url": "http://127.0.0.1:2379",
      region: "eu",
      cluster: "b",
      "registry-lease-ttl": "4",
    }).mcs?.ttlSeconds,
    4,
  );
});

Deno.test("controller flags: bad clusterset flags are refused with the flag's name", () => {
  const base = { "registry-url": "http://127.0.0.1:2379", region: "eu", cluster: "b" };
  for (const bad of ["10.0.0.7", "10.0.0.7:0", "10.0.0.7:70000", "gw.example:15443", ""]) {
    assert.throws(
      () => mcsFlags({ ...base, "east-west-gateway": bad }),
      /--east-west-gateway/,
      `refused: ${JSON.stringify(bad)}`,
    );
  }
  assert.throws(
    () => mcsFlags({ "east-west-gateway": "10.0.0.7:15443" }),
    /--east-west-gateway needs --registry-url/,
  );
  assert.throws(() => mcsFlags({ region: "eu" }), /--region and --cluster need --registry-url/);
  assert.throws(
    () => mcsFlags({ "registry-url": "http://127.0.0.1:2379", region: "eu" }),
    /--registry-url needs --region and --cluster/,
  );
  assert.throws(() => mcsFlags({ ...base, "registry-lease-ttl": "0" }), /--registry-lease-ttl/);
});

Deno.test("controller flags: numbers, seconds and the webhook group", () => {
  assert.equal(seconds("lease-duration", undefined, 15_000), 15_000);
  assert.equal(seconds("lease-duration", "2.5", 15_000), 2_500);
  assert.throws(() => seconds("lease-duration", "-1", 1), /--lease-duration must be a positive/);
  assert.equal(positive("status-qps", "300", 20), 300);
  assert.throws(() => positive("status-qps", "x", 20), /--status-qps must be a positive number/);
  assert.equal(wholeNumber("edge-scoped-routes-at", "0"), 0);
  assert.equal(wholeNumber("edge-scoped-routes-at", "2500"), 2500);
  assert.throws(() => wholeNumber("edge-scoped-routes-at", "-1"), /--edge-scoped-routes-at must/);
  assert.throws(() => wholeNumber("edge-scoped-routes-at", "1.5"), /a whole number/);
  const hook = podWebhookFlags({
    "webhook-address": "[::1]:9443",
    "webhook-service": "svc",
    "webhook-secret": "sec",
    "webhook-configuration": "cfg",
    "webhook-excluded-namespaces": "kube-system, ,aether",
  }, "aether-system");
  assert.equal(hook.hostname, "::1");
  assert.equal(hook.port, 9443);
  assert.deepEqual(hook.excludedNamespaces, ["kube-system", "aether"]);
  assert.throws(
    () => podWebhookFlags({ "webhook-address": "127.0.0.1:9443", "pod-ndots": "16" }, "ns"),
    /--pod-ndots/,
  );
  assert.throws(() => podWebhookFlags({ "webhook-address": "nohost" }, "ns"), /host:port/);
});
