/**
 * Gateway API match precedence. HTTPRoute: Exact path, then RegularExpression (implementation-
 * specific in the spec; aether puts it between Exact and PathPrefix, longer pattern first), then
 * longest PathPrefix (characters), then a method match, most header matches, most query matches.
 * GRPCRoute: most characters in the service, then in the method, then most header matches. Ties
 * across routes: oldest creationTimestamp, then `<namespace>/<name>`; within a route: rule order,
 * then match order. Hostname specificity comes first of all (most characters in a non-wildcard
 * hostname, then in a hostname).
 * @module
 */
import { compareHostnames } from "../hostnames.ts";
import { byAge } from "../object_index.ts";
import type { KubeObject } from "../types.ts";
import type { IRRouteMatch } from "../../ir/mod.ts";

const PATH_RANK = { Exact: 0, RegularExpression: 1, PathPrefix: 2 } as const;

/** Precedence key of an HTTPRoute match (lower sorts first). */
export function httpMatchKey(m: IRRouteMatch): number[] {
  return [
    1,
    PATH_RANK[m.path.type],
    -m.path.value.length,
    m.method ? 0 : 1,
    -m.headers.length,
    -m.queryParams.length,
  ];
}

/** Precedence key of a GRPCRoute match (lower sorts first); GRPCRoute keys sort before HTTPRoute ones. */
export function grpcMatchKey(
  service: string | undefined,
  method: string | undefined,
  headers: number,
): number[] {
  return [0, -(service?.length ?? 0), -(method?.length ?? 0), -headers];
}

/** A route match placed on a hostname, with what precedence needs. */
export interface Ranked {
  hostname: string;
  key: number[];
  route: KubeObject;
  rule: number;
  match: number;
}

/** Orders two ranked matches by Gateway API precedence (negative when `a` wins). */
export function compareRanked(a: Ranked, b: Ranked): number {
  const h = compareHostnames(a.hostname, b.hostname);
  if (h !== 0) return h;
  const n = Math.max(a.key.length, b.key.length);
  for (let i = 0; i < n; i++) {
    const d = (a.key[i] ?? 0) - (b.key[i] ?? 0);
    if (d !== 0) return d;
  }
  // Matches of one route tie on age and kind: skip comparing them (keys, collation).
  const route = a.route === b.route
    ? 0
    : byAge(a.route, b.route) || a.route.kind.localeCompare(b.route.kind);
  return route || a.rule - b.rule || a.match - b.match;
}
