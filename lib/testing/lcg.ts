/**
 * A small seeded pseudo-random generator for test and benchmark fixtures: the same seed gives the
 * same sequence on every run, so generated configurations are deterministic.
 * @module
 */

/** A seeded generator of numbers in [0, 1) (a linear congruential generator). */
export function lcg(seed: number): () => number {
  let s = seed >>> 0;
  return () => (s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32;
}
