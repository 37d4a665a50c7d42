import assert from "node:assert/strict";
import { run } from "./util.ts";

Deno.test("run: stdin is written to the command, large texts too (read while it answers)", async () => {
  const text = "line\n".repeat(400_000); // 2 MB, beyond any pipe buffer
  assert.equal(await run("cat", [], { stdin: text }), text);
});

Deno.test("run: a failed command throws with its exit status and stderr, stdin unread", async () => {
  await assert.rejects(
    run("sh", ["-c", "echo nope >&2; exit 3"], { stdin: "x".repeat(1_000_000) }),
    /failed \(exit 3\): nope/,
  );
});
