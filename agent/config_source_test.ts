import assert from "node:assert/strict";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { MergedSource } from "../lib/engine/mod.ts";
import { configSource } from "./config_source.ts";

const ctx = () => ({ logger: new Logger("t", () => {}, "error"), metrics: new Registry() });

Deno.test("config source: a clusterset needs the registry, a region and a cluster (DNS labels)", async () => {
  await assert.rejects(configSource({ config: ".", region: "eu" }, ctx()), /need --registry-url/);
  await assert.rejects(
    configSource({ config: ".", registryUrl: "http://127.0.0.1:1", region: "eu" }, ctx()),
    /needs --region and --cluster: registry cluster "" is not a DNS label/,
  );
  await assert.rejects(
    configSource(
      { config: ".", registryUrl: "http://127.0.0.1:1", region: "EU", cluster: "a" },
      ctx(),
    ),
    /registry region "EU" is not a DNS label/,
  );
  // Given all three, the registry is a second partition beside the configuration.
  const s = await configSource(
    { config: ".", registryUrl: "http://127.0.0.1:1", region: "eu", cluster: "a" },
    ctx(),
  );
  assert.ok(s instanceof MergedSource);
  assert.deepEqual(s.partitions.map((p) => p.origin), ["config", "registry"]);
});
