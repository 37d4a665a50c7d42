/**
 * Gateway API route matches as Envoy `RouteMatch`.
 * @module
 */
import type { IRKeyValueMatch, IRRouteMatch } from "../../../lib/ir/mod.ts";
import { escapeRegex } from "./util.ts";

/**
 * How a PathPrefix match was expressed, which URL rewrites must know:
 * - `root`: the prefix is "/" (matches every path), emitted as `prefix: "/"`;
 * - `separated`: emitted as `path_separated_prefix` (segment-wise, Envoy's exact Gateway semantics);
 * - `regex`: the prefix holds characters `path_separated_prefix` refuses (`?`, `#`), so it is a
 *   `safe_regex` that matches the prefix followed by end of path or `/`.
 */
export type PrefixForm = "root" | "separated" | "regex";

/**
 * A Gateway API path prefix without its trailing slashes (the spec ignores a trailing `/`:
 * `/foo/` matches exactly what `/foo` matches); "/" stays "/".
 */
export function normalizePrefix(value: string): string {
  const trimmed = value.replace(/\/+$/, "");
  return trimmed === "" ? "/" : trimmed;
}

/** The form `pathPrefixMatch` uses for a (normalized) prefix. */
export function prefixForm(prefix: string): PrefixForm {
  if (prefix === "/") return "root";
  // Envoy validates path_separated_prefix against `^[^?#]+[^?#/]$`.
  return /^[^?#]+[^?#/]$/.test(prefix) ? "separated" : "regex";
}

/** The path part of a RouteMatch for a Gateway API PathPrefix value. */
export function pathPrefixMatch(value: string): Record<string, unknown> {
  const prefix = normalizePrefix(value);
  switch (prefixForm(prefix)) {
    case "root":
      return { prefix: "/" };
    case "separated":
      return { path_separated_prefix: prefix };
    case "regex":
      return { safe_regex: { regex: `${escapeRegex(prefix)}(/.*)?` } };
  }
}

/** A `type.matcher.v3.StringMatcher` for an exact or RE2 comparison. */
export function stringMatcher(m: { type: IRKeyValueMatch["type"]; value: string }) {
  return m.type === "Exact" ? { exact: m.value } : { safe_regex: { regex: m.value } };
}

/** The Envoy `RouteMatch` for one IR match (path, headers, method, query parameters). */
export function routeMatch(m: IRRouteMatch): Record<string, unknown> {
  const out: Record<string, unknown> = m.path.type === "Exact"
    ? { path: m.path.value }
    : m.path.type === "PathPrefix"
    ? pathPrefixMatch(m.path.value)
    : { safe_regex: { regex: m.path.value } };
  const headers = m.headers.map((h) => ({ name: h.name, string_match: stringMatcher(h) }));
  if (m.method !== undefined) {
    headers.push({ name: ":method", string_match: { exact: m.method } });
  }
  if (headers.length) out.headers = headers;
  if (m.queryParams.length) {
    out.query_parameters = m.queryParams.map((q) => ({
      name: q.name,
      string_match: stringMatcher(q),
    }));
  }
  return out;
}
