/** Assertion helpers from node:assert/strict with Deno-std-like names. */
import assertStrict from "node:assert/strict";
export const assert: (value: unknown, message?: string) => asserts value = assertStrict.ok;
export const assertEquals: <T>(actual: unknown, expected: T, message?: string) => void =
  assertStrict.deepStrictEqual;
