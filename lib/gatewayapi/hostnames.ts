/**
 * Gateway API hostname rules: a wildcard `*.example.com` matches any name with at least one more
 * label (`foo.example.com`, `a.foo.example.com`, never `example.com`); a listener hostname and a
 * route hostname intersect to the more specific of the two; precedence prefers more characters in
 * a non-wildcard name, then more characters.
 * @module
 */

/** Whether `host` is a wildcard name (`*.suffix`). The catch-all `*` is one too. */
export const isWildcard = (host: string): boolean => host.startsWith("*");

/**
 * Whether every name matched by `specific` is also matched by `general`: `*` covers everything,
 * `*.example.com` covers `foo.example.com`, `a.b.example.com` and `*.foo.example.com`.
 */
export function covers(general: string, specific: string): boolean {
  if (general === "*" || general === specific) return true;
  if (!general.startsWith("*.")) return false;
  const suffix = general.slice(1); // ".example.com"
  const rest = specific.startsWith("*.") ? specific.slice(1) : specific;
  return rest.length > suffix.length && rest.endsWith(suffix);
}

/**
 * The hostname both a listener hostname and a route hostname accept, or undefined when they are
 * disjoint. Undefined/empty listener or route hostnames mean "any" (`*`).
 */
export function intersectHostname(listener: string | undefined, route: string): string | undefined {
  const l = listener || "*";
  if (covers(l, route)) return route;
  if (covers(route, l)) return l;
  return undefined;
}

/**
 * The hostnames a route serves on a listener: the intersections of each route hostname with the
 * listener hostname, deduplicated and sorted by precedence. An empty result means the route does
 * not match the listener (NoMatchingListenerHostname).
 */
export function routeHostnames(
  listener: string | undefined,
  route: string[] | undefined,
): string[] {
  const candidates = route && route.length > 0 ? route : ["*"];
  const out = new Set<string>();
  for (const host of candidates) {
    const hit = intersectHostname(listener, host);
    if (hit !== undefined) out.add(hit);
  }
  return [...out].sort(compareHostnames);
}

/**
 * Orders hostnames most specific first: exact names before wildcards, then by more characters
 * (non-wildcard characters for wildcards), then alphabetically; `*` last.
 */
export function compareHostnames(a: string, b: string): number {
  const wa = isWildcard(a), wb = isWildcard(b);
  if (wa !== wb) return wa ? 1 : -1;
  if (a.length !== b.length) return b.length - a.length;
  return a < b ? -1 : a > b ? 1 : 0;
}
