import assert from "node:assert/strict";
import { RateLimiter } from "./rate_limit.ts";

Deno.test("rate limiter: burst, refill over time, per source, bounded table", () => {
  let now = 0;
  const rl = new RateLimiter({ qps: 10, burst: 3, slip: 2, maxSources: 2 }, () => now);
  assert.deepEqual([1, 2, 3].map(() => rl.check("a")), ["allow", "allow", "allow"]);
  assert.deepEqual([rl.check("a"), rl.check("a"), rl.check("a")], ["drop", "slip", "drop"]);
  assert.equal(rl.check("b"), "allow", "other sources unaffected");
  now = 100; // 0.1 s × 10 qps = one token
  assert.equal(rl.check("a"), "allow");
  assert.equal(rl.check("a"), "slip");
  rl.check("c");
  assert.equal(rl.sources, 2);
  assert.equal(new RateLimiter({ qps: 0 }).check("x"), "allow");
});
