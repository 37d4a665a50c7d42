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

/** A copy of `items` sorted by their `name` (code-unit order, locale-independent). */
export function sortedByName<T extends { name: string }>(items: T[]): T[] {
  return [...items].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/** Copies `value` into `target[key]` only when it is not undefined (keeps outputs minimal). */
export function setIf(target: Record<string, unknown>, key: string, value: unknown): void {
  if (value !== undefined) target[key] = value;
}
