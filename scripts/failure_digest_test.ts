import { assertEquals } from "../testbed/assert.ts";
import { digest, failedFiles, failures } from "./failure_digest.ts";

/** What `deno test --parallel` (2.9) printed for a failed step, an uncaught error and a pass. */
const output = [
  "./e2e/a_test.ts => top ... inner ... FAILED (0ms)",
  "Uncaught error from ./e2e/b_test.ts FAILED",
  "./e2e/a_test.ts => ok ... ok (46µs)",
  "",
  " ERRORS ",
  "",
  "top ... inner => ./e2e/a_test.ts:1:41",
  "error: Error: boom",
  "second",
  "    at file:///tmp/dt/a_test.ts:1:69",
  "",
  "./e2e/b_test.ts (uncaught error)",
  "error: (in promise) Error: load fail",
  "",
  " FAILURES ",
  "",
  "top ... inner => ./e2e/a_test.ts:1:41",
  "./e2e/b_test.ts (uncaught error)",
  "top ... other => ./e2e/a_test.ts:9:3",
  "",
  "FAILED | 2 passed | 2 failed (1 step) (108ms)",
  "",
  "error: Test failed",
].join("\n");

Deno.test("failure digest: entries, files and first error lines from deno test's output", () => {
  const list = failures(output, 2);
  assertEquals(list.map((f) => f.file), ["e2e/a_test.ts", "e2e/b_test.ts", "e2e/a_test.ts"]);
  assertEquals(list[0].error, ["error: Error: boom", "second"]);
  assertEquals(list[1].error, ["error: (in promise) Error: load fail"]);
  assertEquals(list[2].error, []);
  assertEquals(failedFiles(list), ["e2e/a_test.ts", "e2e/b_test.ts"]);
  assertEquals(digest(list.slice(1, 2)), [
    "./e2e/b_test.ts (uncaught error)",
    "    error: (in promise) Error: load fail",
  ]);
});

Deno.test("failure digest: a passing run has no failures", () => {
  assertEquals(failures("./x_test.ts => ok ... ok (1ms)\n\nok | 1 passed | 0 failed (5ms)\n"), []);
});
