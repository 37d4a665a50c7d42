import assert from "node:assert/strict";
import { join } from "node:path";
import { appSources, entryPoints, isImageSource } from "./image_files.ts";

Deno.test("isImageSource: the shipped folders whole and the lock file, not tests or test data", () => {
  for (
    const p of [
      "deno.json",
      "deno.lock",
      "agent/main.ts",
      "lib/ir/mod.ts",
      "proto/spiffe/workload.proto",
      "agent/xds/envoy_api.gen.json",
      "cni/main.ts",
      "lib/x/tests/a.ts", // no folder rule but testdata/: the shipped-closure test refuses strays
    ]
  ) assert.ok(isImageSource(p), p);
  for (
    const p of [
      "agent/xds/translate/translate_test.ts",
      "lib/gatewayapi/testdata/a.yaml",
      "agent/xds/translate/_test_utils.ts",
      "agent/dns/_netns_test_utils.ts",
      "testbed/cluster/aether_image.ts",
      "tools/dns_responder.ts",
      "tools/gateway-api/v1.5.1/LICENSE",
      "e2e/cluster_test.ts",
      "bench/main.ts",
      "docs/peers.md",
      "README.md",
      "Dockerfile",
    ]
  ) assert.ok(!isImageSource(p), p);
});

Deno.test("entryPoints: the binaries present, cni/main.ts once it exists", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-entry-points-" });
  try {
    for (const d of ["agent", "controller", "cni"]) await Deno.mkdir(join(dir, d));
    await Deno.writeTextFile(join(dir, "agent/main.ts"), "");
    await Deno.writeTextFile(join(dir, "controller/main.ts"), "");
    assert.deepEqual(await entryPoints(dir), ["agent/main.ts", "controller/main.ts"]);
    await Deno.writeTextFile(join(dir, "cni/main.ts"), "");
    assert.deepEqual(await entryPoints(dir), [
      "agent/main.ts",
      "controller/main.ts",
      "cni/main.ts",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("appSources: the layer's files under app/, not node_modules/ or directories", () => {
  const layer = [
    "app/",
    "app/agent/",
    "app/agent/main.ts",
    "app/deno.json",
    "app/node_modules/",
    "app/node_modules/.deno/x/index.js",
    "app/node_modules/yaml",
    "deno-dir/npm/registry.npmjs.org/yaml/2.9.1/index.js",
    "usr/local/bin/deno",
  ];
  assert.deepEqual(appSources(layer), ["agent/main.ts", "deno.json"]);
});
