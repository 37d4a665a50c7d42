import assert from "node:assert/strict";
import { parseLdd } from "./aether_image.ts";

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
