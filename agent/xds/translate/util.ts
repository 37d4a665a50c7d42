/**
 * Small shared helpers for the translators: proto3 value shapes in protobufjs `fromObject` form.
 * @module
 */
import { typeUrlPrefix } from "../proto.ts";
import { API_V3 } from "./enums.ts";

/** A google.protobuf.Duration in fromObject form. */
export interface Duration {
  seconds: number;
  nanos?: number;
}

/** Milliseconds as a Duration (`nanos` only when non-zero). */
export function duration(ms: number): Duration {
  const whole = Math.floor(ms / 1000);
  const nanos = Math.round((ms - whole * 1000) * 1e6);
  return nanos === 0 ? { seconds: whole } : { seconds: whole, nanos };
}

/** A google.protobuf.Any wrapping `fields` of message type `fullName`. */
export function any(
  fullName: string,
  fields: Record<string, unknown> = {},
): Record<string, unknown> {
  return { "@type": typeUrlPrefix + fullName, ...fields };
}

/** An xDS ConfigSource pointing at the ADS stream (v3). */
export function adsConfigSource(): Record<string, unknown> {
  return { ads: {}, resource_api_version: API_V3 };
}

/** Escapes a literal for use inside an RE2 regular expression. */
export function escapeRegex(literal: string): string {
  return literal.replace(/[\\^$.|?*+()[\]{}]/g, "\\$&");
}

/** Escapes a literal for use as an RE2 substitution string (where `\N` is a capture group). */
export function escapeSubstitution(literal: string): string {
  return literal.replace(/\\/g, "\\\\");
}

/** A stat-prefix-safe form of a name: every character outside `[A-Za-z0-9_]` becomes `_`. */
export function statName(name: string): string {
  return name.replace(/[^A-Za-z0-9_]/g, "_");
}

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** A copy of `items` sorted by their `name` (code-unit order, locale-independent). */
export function sortedByName<T extends { name: string }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => byName(a.name, b.name));
}

/**
 * {@link sortedByName} for one stream of lists (one per translator and list), remembering the
 * last list's names and the order it sorted them into: a list with the same names at the same
 * positions (an edit inside some items, none added, removed or renamed) is put in that order
 * again without a comparison sort, so every name keeps its output position too; one with a name
 * inserted or taken out is put in that order with the name placed by a binary search, or left out.
 */
export class NameOrder {
  #names: readonly string[] = [];
  /** Output position → input position, for {@link #names}. */
  #order: readonly number[] = [];
  /**
   * Lists put in the last order (hits), in it with one name inserted (inserts) or one taken out
   * (removes), or sorted.
   */
  hits = 0;
  inserts = 0;
  removes = 0;
  misses = 0;

  /** `items` sorted by name, as {@link sortedByName} sorts them. */
  sorted<T extends { name: string }>(items: readonly T[]): T[] {
    const names = this.#names;
    let same = names.length === items.length;
    for (let i = 0; same && i < items.length; i++) same = items[i].name === names[i];
    if (same) {
      this.hits++;
      return this.#order.map((i) => items[i]);
    }
    const at = insertedAt(names, items);
    if (at !== undefined) {
      this.inserts++;
      this.#names = items.map((r) => r.name);
      this.#order = insertInOrder(this.#order, items, at);
      return this.#order.map((i) => items[i]);
    }
    const gone = insertedAt(items, names);
    if (gone !== undefined) {
      this.removes++;
      this.#names = items.map((r) => r.name);
      this.#order = this.#order.filter((i) => i !== gone).map((i) => (i > gone ? i - 1 : i));
      return this.#order.map((i) => items[i]);
    }
    this.misses++;
    this.#names = items.map((r) => r.name);
    const keys = this.#names;
    this.#order = keys.map((_, i) => i).sort((a, b) => byName(keys[a], keys[b]));
    return this.#order.map((i) => items[i]);
  }
}

/**
 * Where the names of `items` are `names` with one inserted: its position; else undefined (with
 * the two swapped: where a name of `names` was taken out).
 */
function insertedAt(
  names: readonly (string | { name: string })[],
  items: readonly (string | { name: string })[],
) {
  if (items.length !== names.length + 1) return undefined;
  const nameOf = (x: string | { name: string }) => typeof x === "string" ? x : x.name;
  let at = 0;
  while (at < names.length && nameOf(items[at]) === nameOf(names[at])) at++;
  for (let i = at; i < names.length; i++) {
    if (nameOf(items[i + 1]) !== nameOf(names[i])) return undefined;
  }
  return at;
}

/**
 * `order` (output → input position) with input `at` inserted: later inputs move one on, and `at`
 * goes where a stable sort by name puts it (after equal names of earlier inputs, before later).
 */
function insertInOrder(
  order: readonly number[],
  items: readonly { name: string }[],
  at: number,
): number[] {
  const out = order.map((i) => (i >= at ? i + 1 : i));
  const name = items[at].name;
  let lo = 0, hi = out.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((byName(items[out[mid]].name, name) || out[mid] - at) < 0) lo = mid + 1;
    else hi = mid;
  }
  out.splice(lo, 0, at);
  return out;
}

/** Copies `value` into `target[key]` only when it is not undefined (keeps outputs minimal). */
export function setIf(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value;
}

/** `at`, or the position beside it, where `list` holds `item`; else undefined. */
export function positionOf<T>(list: readonly T[], item: T, at: number): number | undefined {
  return list[at] === item
    ? at
    : list[at + 1] === item
    ? at + 1
    : list[at - 1] === item
    ? at - 1
    : undefined;
}
