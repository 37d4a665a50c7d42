/**
 * Scoped routes (SRDS): an HTTP filter chain with many exact hostnames served as one small
 * RouteConfiguration per virtual host, chosen by the request's host, instead of one table of every
 * virtual host. Envoy rebuilds a whole route table on any change to it (VHDS included: ≈ 300 ms at
 * 10,000 hosts on a 2-core machine), so an edit at 10k costs what it costs at 1k only when each
 * host has a table of its own (docs/performance.md "Scoped RDS").
 *
 * Names: the scope of a domain is `<routeConfigName>/<domain>` (ScopedRouteConfiguration, keyed by
 * the domain), the table of a virtual host `<routeConfigName>/<vhost name>` (RouteConfiguration,
 * the virtual host with domains `*` inside, as its VHDS resource would be).
 *
 * A scope key is matched exactly, so a chain is scoped only when every virtual host has exact
 * hostnames (no wildcard, no catch-all: a Host they would serve has no scope to fall into), and a
 * filter before the router lower-cases the request's host (Envoy matches virtual host domains
 * whatever the case; a scope key only as sent).
 * @module
 */
import type { IRHttpFilterChain } from "../../../lib/ir/mod.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, any, positionOf } from "./util.ts";
import { IdentityMemo } from "../../../lib/memo/mod.ts";

/** Hosts in one HTTP filter chain from which it is served scoped, by default (0: never). */
export const DEFAULT_SCOPED_ROUTES_AT = 2000;

const LUA = "envoy.extensions.filters.http.lua.v3.Lua";
const WITH_MATCHER = "envoy.extensions.common.matching.v3.ExtensionWithMatcher";
const HEADER_INPUT = "envoy.type.matcher.v3.HttpRequestHeaderMatchInput";
const SKIP = "envoy.extensions.filters.common.matcher.action.v3.SkipFilter";
const ON_DEMAND = "envoy.extensions.filters.http.on_demand.v3.OnDemand";

/** Whether `chain` is served as scoped routes with the threshold `at` (0 or less: never). */
export function isScoped(chain: IRHttpFilterChain, at: number): boolean {
  return at > 0 && chain.virtualHosts.length >= at &&
    chain.virtualHosts.every((vh) => vh.domains.length > 0 && vh.domains.every(exactHost));
}

const exactHost = (domain: string) => !domain.includes("*");

/**
 * The HTTP connection manager's `scoped_routes` for a table: scopes over SRDS and their tables
 * over RDS, both from ADS; the key is the `:authority` before any `:port`.
 */
export function scopedRoutesField(routeConfigName: string): Record<string, unknown> {
  return {
    name: routeConfigName,
    scope_key_builder: {
      fragments: [{
        header_value_extractor: { name: ":authority", element_separator: ":", index: 0 },
      }],
    },
    rds_config_source: adsConfigSource(),
    scoped_rds: { scoped_rds_config_source: adsConfigSource() },
  };
}

/**
 * The filter that lower-cases a request's host before the router picks its scope: a Lua filter
 * (the route is looked up again after it) behind a matcher that skips it for a host without an
 * upper-case letter, so the common request pays an RE2 match, not a Lua call (Envoy CPU per
 * request, docs/performance.md: +13 µs always in Lua, +7 µs behind the matcher).
 */
export function hostLowerCaseFilter(): Record<string, unknown> {
  const lua = any(LUA, {
    default_source_code: {
      inline_string: [
        "function envoy_on_request(handle)",
        '  local host = handle:headers():get(":authority")',
        '  if host ~= nil and string.find(host, "%u") ~= nil then',
        '    handle:headers():replace(":authority", string.lower(host))',
        "    handle:clearRouteCache()",
        "  end",
        "end",
      ].join("\n"),
    },
  });
  const noCapitals = {
    single_predicate: {
      input: {
        name: "authority",
        typed_config: any(HEADER_INPUT, { header_name: ":authority" }),
      },
      value_match: { safe_regex: { google_re2: {}, regex: "[^A-Z]*" } },
    },
  };
  return {
    name: "aether.host_lower_case",
    typed_config: any(WITH_MATCHER, {
      extension_config: { name: "envoy.filters.http.lua", typed_config: lua },
      xds_matcher: {
        matcher_list: {
          matchers: [{
            predicate: noCapitals,
            on_match: { action: { name: "skip", typed_config: any(SKIP) } },
          }],
        },
      },
    }),
  };
}

/** Envoy's on-demand filter: a request through an on-demand scope fetches its table first. */
export function onDemandFilter(): Record<string, unknown> {
  return { name: "envoy.filters.http.on_demand", typed_config: any(ON_DEMAND) };
}

/** One virtual host's table and the scopes (one per domain) that select it. */
export interface ScopedHost {
  readonly table: NamedResource;
  readonly scopes: readonly NamedResource[];
}

/**
 * The table and scopes of one virtual host of a scoped chain. `vhds` is its VHDS resource
 * (route.ts: named `<routeConfigName>/<vhost>`, shared and never mutated); `base` the fields every
 * table of the chain shares (route.ts `routeConfiguration` without `vhds`). With `onDemand` the
 * scopes are on demand: Envoy asks for a host's table on its first request through it.
 */
export function scopedHost(
  routeConfigName: string,
  domains: readonly string[],
  vhds: NamedResource,
  base: Record<string, unknown>,
  onDemand = false,
): ScopedHost {
  const name = vhds.name;
  return {
    table: {
      name,
      resource: { name, ...base, virtual_hosts: [{ ...vhds.resource, domains: ["*"] }] },
    },
    scopes: domains.map((domain) => {
      // Hostnames are lower case by the Gateway API's rules; a scope key must be (scoped.ts).
      const key = domain.toLowerCase();
      const scope = `${routeConfigName}/${key}`;
      return {
        name: scope,
        resource: {
          name: scope,
          route_configuration_name: name,
          ...(onDemand ? { on_demand: true } : {}),
          key: { fragments: [{ string_key: key }] },
        },
      };
    }),
  };
}

/** What one translator remembers of its scoped chains (translate's memo holds one). */
export class ScopedMemo {
  /** Per route table: its VHDS resources of last time and what they gave, position by position. */
  readonly #chains = new Map<string, ScopedList>();
  /** What a VHDS resource gave, for one not found at its position (an add, a move). */
  readonly #hosts = new IdentityMemo<NamedResource, ScopedHost & { baseKey: string }>();

  /**
   * The tables and scopes of a scoped chain whose virtual hosts' VHDS resources are `vhds` (in
   * the chain's order). A VHDS resource at its position of last time (or beside it) is not looked
   * at again: an edit of one host makes one new table and keeps every other object.
   */
  hosts(
    chain: IRHttpFilterChain,
    vhds: readonly NamedResource[],
    base: Record<string, unknown>,
    onDemand = false,
  ): readonly ScopedHost[] {
    const table = chain.routeConfigName;
    const baseKey = JSON.stringify(base) + (onDemand ? " on demand" : "");
    const last = this.#chains.get(table);
    const was = last?.baseKey === baseKey ? last : undefined;
    let shift = 0;
    const out = vhds.map((r, i) => {
      const at = was === undefined ? undefined : positionOf(was.vhds, r, i + shift);
      if (at !== undefined) {
        shift = at - i;
        return was!.hosts[at];
      }
      const seen = this.#hosts.peek(r);
      if (seen?.baseKey === baseKey) return seen;
      const domains = chain.virtualHosts[i].domains;
      const made = { ...scopedHost(table, domains, r, base, onDemand), baseKey };
      this.#hosts.set(r, made);
      return made;
    });
    this.#chains.set(table, { baseKey, vhds, hosts: out });
    return out;
  }

  /** Forgets the route tables other than `tables` (the last translation's scoped ones). */
  keep(tables: ReadonlySet<string>): void {
    for (const table of this.#chains.keys()) if (!tables.has(table)) this.#chains.delete(table);
  }
}

interface ScopedList {
  readonly baseKey: string;
  readonly vhds: readonly NamedResource[];
  readonly hosts: readonly ScopedHost[];
}
