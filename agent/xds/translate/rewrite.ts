/**
 * Path rewrites shared by URLRewrite (RouteAction) and RequestRedirect (RedirectAction): both
 * Envoy messages name the fields `prefix_rewrite` and `regex_rewrite` alike.
 * @module
 */
import type { IRRouteMatch } from "../../../lib/ir/mod.ts";
import { normalizePrefix, prefixForm } from "./match.ts";
import { escapeRegex, escapeSubstitution } from "./util.ts";

/** `{pattern, substitution}` in Envoy's RegexMatchAndSubstitute form. */
function regexRewrite(regex: string, substitution: string): Record<string, unknown> {
  return { regex_rewrite: { pattern: { regex }, substitution } };
}

/**
 * Fields replacing the whole path with `value` (query string preserved; Envoy matches the
 * pattern against the path only).
 */
export function fullPathRewrite(value: string): Record<string, unknown> {
  return regexRewrite("^/.*$", escapeSubstitution(value));
}

/**
 * Fields implementing Gateway API ReplacePrefixMatch for a route matched by `match`. With a
 * prefix P (trailing `/` ignored) and replacement R (trailing `/` ignored unless R is "/"):
 * `P` → `R`, `P/` → `R/`, `P/x` → `R/x`; and R = "/" gives `P` → `/`, `P/x` → `/x` (never `//x`).
 * An Exact match is treated as its own prefix. A RegularExpression match has no prefix to
 * replace; resolve rejects that combination, and here it yields no rewrite.
 */
export function prefixRewrite(match: IRRouteMatch, replacement: string): Record<string, unknown> {
  if (match.path.type === "RegularExpression") return {};
  const prefix = normalizePrefix(match.path.value);
  const repl = replacement.replace(/\/+$/, "");
  const form = prefixForm(prefix);
  if (form === "root") {
    // Every path starts with "/": put R in front of it ("/" + "x" → "R/x").
    return repl === "" ? {} : regexRewrite("^/", escapeSubstitution(repl) + "/");
  }
  if (repl === "") {
    // Drop the prefix and any slashes after it, then restore one leading "/".
    return regexRewrite(`^${escapeRegex(prefix)}/*`, "/");
  }
  if (form === "separated" && match.path.type === "PathPrefix") {
    // Envoy swaps exactly the matched prefix (without the trailing slash), so "P/x" → "R/x".
    return { prefix_rewrite: repl };
  }
  return regexRewrite(`^${escapeRegex(prefix)}`, escapeSubstitution(repl));
}
