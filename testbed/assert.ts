/** Assertion helpers over node:assert/strict with Deno-std-like names. */
import assertStrict from "node:assert/strict";

/** Asserts that `value` is truthy. */
export function assert(value: unknown, message?: string): asserts value {
  if (message === undefined) assertStrict.ok(value);
  else assertStrict.ok(value, message);
}

/** Asserts deep strict equality. */
export function assertEquals<T>(
  actual: unknown,
  expected: T,
  message?: string,
): asserts actual is T {
  if (message === undefined) assertStrict.deepStrictEqual(actual, expected);
  else assertStrict.deepStrictEqual(actual, expected, message);
}
