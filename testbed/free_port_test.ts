import assert from "node:assert/strict";
import { freePort } from "./free_port.ts";

Deno.test("freePort: bindable, below the ephemeral range, skips a port in use", () => {
  const held: Deno.Listener[] = [];
  try {
    for (let i = 0; i < 50; i++) {
      const port = freePort();
      assert.ok(port >= 20_000 && port < 32_768, `port ${port} outside 20000–32767`);
      held.push(Deno.listen({ hostname: "127.0.0.1", port })); // throws if it was not free
    }
    const inUse = new Set(held.map((l) => (l.addr as Deno.NetAddr).port));
    assert.equal(inUse.size, 50);
  } finally {
    for (const l of held) l.close();
  }
});
