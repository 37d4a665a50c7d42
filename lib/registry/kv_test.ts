import { kvContract } from "./_kv_contract_test_utils.ts";
import { MemoryKv } from "../../testbed/memory_kv.ts";
import { prefixEnd } from "./kv.ts";
import assert from "node:assert/strict";

Deno.test("registry kv contract: memory backend", async (t) => {
  let now = 0;
  const kv = new MemoryKv(() => now);
  const checks = kvContract(kv, (s) => {
    now += s * 1000;
    kv.expireLeases();
    return Promise.resolve();
  });
  for (const [name, body] of Object.entries(checks)) await t.step(name, body);
});

Deno.test("prefixEnd bounds a prefix and refuses the empty one", () => {
  assert.equal(prefixEnd("/a/"), "/a0");
  assert.throws(() => prefixEnd(""), /whole store/);
});
