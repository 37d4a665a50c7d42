import assert from "node:assert/strict";
import { isImageSource, parseLdd } from "./aether_image.ts";

Deno.test("isImageSource: sources and the lock file in, tests and test data out", () => {
  for (const p of ["deno.json", "deno.lock", "agent/main.ts", "lib/ir/mod.ts", "proto/x.proto"]) {
    assert.ok(isImageSource(p), p);
  }
  for (
    const p of [
      "agent/xds/translate/translate_test.ts",
      "lib/gatewayapi/testdata/a.yaml",
      "agent/xds/translate/_test_utils.ts",
      "e2e/cluster_test.ts",
      "bench/main.ts",
      "docs/peers.md",
      "README.md",
    ]
  ) assert.ok(!isImageSource(p), p);
});

Deno.test("parseLdd: resolved libraries and the loader, not the vDSO", () => {
  const out = `	linux-vdso.so.1 (0x00007ffd)
	libdl.so.2 => /lib/x86_64-linux-gnu/libdl.so.2 (0x00007f)
	libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f)
	/lib64/ld-linux-x86-64.so.2 (0x00007f)
`;
  assert.deepEqual(parseLdd(out), [
    "/lib/x86_64-linux-gnu/libdl.so.2",
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib64/ld-linux-x86-64.so.2",
  ]);
});
