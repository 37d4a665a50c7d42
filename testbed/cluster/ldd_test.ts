import assert from "node:assert/strict";
import { lddPaths } from "./ldd.ts";

Deno.test("lddPaths: each library's resolved path and the loader, not the vDSO", () => {
  const text = `\tlinux-vdso.so.1 (0x00007f53bc84c000)
\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f53bc605000)
\tlibm.so.6 => /lib/x86_64-linux-gnu/libm.so.6 (0x00007f53bc56b000)
\t/lib64/ld-linux-x86-64.so.2 (0x00007f53bc84e000)
`;
  assert.deepEqual(lddPaths(text), [
    "/lib/x86_64-linux-gnu/libc.so.6",
    "/lib/x86_64-linux-gnu/libm.so.6",
    "/lib64/ld-linux-x86-64.so.2",
  ]);
  assert.deepEqual(lddPaths("\tnot a dynamic executable\n"), []);
});
