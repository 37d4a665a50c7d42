/**
 * What Envoy's regex engine (RE2) cannot compile although a JavaScript RegExp can: look-around,
 * back-references, atomic groups and possessive quantifiers. A route using one is Accepted=False
 * (UnsupportedValue) instead of being sent to Envoy, which would reject the whole update. RE2's
 * program-size limit is not modelled here; a regex over it is caught by Envoy's NACK. Pure.
 * @module
 */
import type { IRRouteMatch } from "../../ir/mod.ts";

/** Why RE2 cannot compile `pattern`, or undefined when it (probably) can. */
export function re2Problem(pattern: string): string | undefined {
  let inClass = false;
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "\\") {
      const next = pattern[i + 1] ?? "";
      if (!inClass && /[1-9]/.test(next)) return `back-reference \\${next} is not supported by RE2`;
      if (!inClass && next === "k" && pattern[i + 2] === "<") {
        return "named back-reference is not supported by RE2";
      }
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") {
      inClass = true;
      if (pattern[i + 1] === "]") i++; // a leading "]" is literal
      continue;
    }
    if (c === "(" && pattern[i + 1] === "?") {
      const rest = pattern.slice(i + 2, i + 4);
      if (rest.startsWith("=") || rest.startsWith("!")) return "look-ahead is not supported by RE2";
      if (rest === "<=" || rest === "<!") return "look-behind is not supported by RE2";
      if (rest.startsWith(">")) return "atomic groups are not supported by RE2";
    }
    if ((c === "*" || c === "+" || c === "?" || c === "}") && pattern[i + 1] === "+") {
      return "possessive quantifiers are not supported by RE2";
    }
  }
  try {
    new RegExp(pattern);
  } catch (e) {
    return `invalid regular expression: ${(e as Error).message}`;
  }
  return undefined;
}

/** Problems of every regular expression in one match, each named by its field under `field`. */
export function matchRegexProblems(match: IRRouteMatch, field: string): string[] {
  const out: string[] = [];
  const check = (value: string, at: string) => {
    const why = re2Problem(value);
    if (why) out.push(`${field}.${at}: ${why}`);
  };
  if (match.path.type === "RegularExpression") check(match.path.value, "path.value");
  match.headers.forEach((h, i) =>
    h.type === "RegularExpression" && check(h.value, `headers[${i}].value`)
  );
  match.queryParams.forEach((q, i) =>
    q.type === "RegularExpression" && check(q.value, `queryParams[${i}].value`)
  );
  return out;
}
