/**
 * Converted rules → ordered IRRoutes, shared by the edge (one virtual host of a listener) and the
 * mesh (one Service port): every match of every rule becomes a ranked entry, the entries are
 * sorted by Gateway API precedence, and each is rendered for its context (redirect port).
 * @module
 */
import { cloneData } from "../../data/mod.ts";
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

/** Sorts `entries` by precedence (in place) and renders them as IRRoutes for `context`. */
export function renderRoutes(entries: RankedEntry[], context: ListenerContext): IRRoute[] {
  entries.sort(compareRanked);
  return entries.map((e): IRRoute =>
    cloneData({
      name: e.cm.name,
      match: e.cm.match,
      ...(e.converted.requestHeaders ? { requestHeaders: e.converted.requestHeaders } : {}),
      ...(e.converted.responseHeaders ? { responseHeaders: e.converted.responseHeaders } : {}),
      action: e.converted.action(context),
    })
  );
}
