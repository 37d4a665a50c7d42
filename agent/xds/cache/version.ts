/**
 * Versions of xDS resource lists: a resource's content hash (SHA-256 of its bytes, 16 hex digits),
 * its share of its type's version (52 bits of a hash of name and content hash), and a type's
 * version as the sum of its resources' shares modulo 2^52 — order-free, moved by one share per
 * edited resource without rehashing the rest.
 * @module
 */
import { createHash } from "node:crypto";

/** A short stable hash (16 hex digits of SHA-256) of bytes or text. */
export function hashOf(data: Uint8Array | string): string {
  return createHash("sha256").update(data).digest("hex").slice(0, 16);
}

/** Shares add up modulo 2^52, so every sum and difference of two stays an exact integer. */
const SHARE_MOD = 2 ** 52;

/**
 * A resource's share of its type's version (`EncodedResource.share` in ./snapshot.ts): 52 bits mixed
 * from its name and content hash by two 32-bit multiply-xor lanes. The content hash is
 * SHA-256-derived already, so this needs no second SHA-256 (that was a quarter of encoding a
 * cold snapshot's clusters and load assignments).
 */
export function shareOf(name: string, hash: string): number {
  let a = 0x811c9dc5, b = 0x27d4eb2f;
  const mix = (c: number) => {
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 13;
  };
  for (let i = 0; i < name.length; i++) mix(name.charCodeAt(i));
  mix(0);
  for (let i = 0; i < hash.length; i++) mix(hash.charCodeAt(i));
  a = avalanche(a ^ Math.imul(b, 0x9e3779b1));
  b = avalanche(b ^ a);
  return (b >>> 0) * 2 ** 20 + (a >>> 12);
}

/** Spreads every input bit over the 32 output bits (a multiply-xorshift finalizer). */
function avalanche(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** `sum + add - remove`, modulo {@link SHARE_MOD} (every argument below it). */
export function moveSum(sum: number, remove: number, add: number): number {
  let out = sum - remove;
  if (out < 0) out += SHARE_MOD;
  out += add;
  return out >= SHARE_MOD ? out - SHARE_MOD : out;
}

/** The version string of a share sum over `count` resources: 13 hex digits, or "empty". */
export const versionText = (sum: number, count: number) =>
  count === 0 ? "empty" : sum.toString(16).padStart(13, "0");

/**
 * The version of a set of encoded resources: the sum of their shares, so the same content always
 * gives the same version whatever order it came in. The empty set is "empty".
 */
export function versionOf(items: Iterable<{ readonly share: number }>): string {
  let sum = 0, count = 0;
  for (const r of items) {
    sum = moveSum(sum, 0, r.share);
    count++;
  }
  return versionText(sum, count);
}
