/**
 * Converted rules → ordered IRRoutes, shared by the edge (one virtual host of a listener) and the
 * mesh (one Service port): every match of every rule becomes a ranked entry, the entries are
 * sorted by Gateway API precedence, and each is rendered for its context (redirect port).
 * @module
 */
import { compareRanked, type Ranked } from "./precedence.ts";
import type { ConvertedMatch, ConvertedRoute, ConvertedRule, ListenerContext } from "./kind.ts";
import type { KubeObject } from "../types.ts";
import type { IRRoute } from "../../ir/mod.ts";

/** One match of one rule of one route, ranked for precedence. */
export interface RankedEntry extends Ranked {
  converted: ConvertedRule;
  cm: ConvertedMatch;
}

/** Appends to `out` the ranked entries of every match of every rule of `route`. */
export function pushEntries(
  out: RankedEntry[],
  route: KubeObject,
  converted: ConvertedRoute,
  hostname: string,
) {
  converted.rules.forEach((rule, r) =>
    rule.matches.forEach((cm, match) =>
      out.push({ hostname, key: cm.key, route, rule: r, match, converted: rule, cm })
    )
  );
}

/**
 * Sorts `entries` by precedence (in place) and renders them as IRRoutes for `context`. A route's
 * match, header modifiers and action are its converted rule's own (shared by every virtual host
 * and resolve that renders the rule, as the IR is shared: read-only), not copies.
 */
export function renderRoutes(entries: RankedEntry[], context: ListenerContext): IRRoute[] {
  entries.sort(compareRanked);
  return entries.map((e): IRRoute => {
    const { name, match } = e.cm;
    const { requestHeaders, responseHeaders } = e.converted;
    const action = e.converted.action(context);
    if (!requestHeaders && !responseHeaders) return { name, match, action };
    return {
      name,
      match,
      ...(requestHeaders ? { requestHeaders } : {}),
      ...(responseHeaders ? { responseHeaders } : {}),
      action,
    };
  });
}
