import assert from "node:assert/strict";
import { rcodeLabel, typeLabel } from "./wire_answer.ts";

Deno.test("dns metric labels: mnemonics for known types and rcodes, bounded for the rest", () => {
  assert.equal(typeLabel(1), "A");
  assert.equal(typeLabel(28), "AAAA");
  assert.equal(typeLabel(65), "other", "HTTPS is not in the table");
  assert.equal(typeLabel(0), "other");
  assert.equal(rcodeLabel(0), "NOERROR");
  assert.equal(rcodeLabel(3), "NXDOMAIN");
  assert.equal(rcodeLabel(11), "RCODE11");
  // Inherited object keys are no labels.
  assert.equal(typeLabel("constructor" as unknown as number), "other");
});
