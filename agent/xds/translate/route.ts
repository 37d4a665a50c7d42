/**
 * RouteConfigurations (RDS): one per IRHttpFilterChain, carrying no virtual host of its own but VHDS
 * over ADS (delta); each IR virtual host is a VirtualHost resource `<routeConfigName>/<name>`,
 * routes in IR order. A route edit then pushes one virtual host, not the whole table. Every
 * virtual host is sent eagerly (Envoy opens VHDS as a wildcard), and there is no on-demand
 * filter: a Host no virtual host serves gets the router's 404 at once.
 * @module
 */
import { ClusterMemo } from "./cluster_memo.ts";
import type { IRHttpFilterChain, IRRoute, IRVirtualHost } from "../../../lib/ir/mod.ts";
import {
  directResponse,
  forwardAction,
  httpPort80,
  redirectAction,
  type RouteListener,
} from "./action.ts";
import { applyHeaderModifiers } from "./headers.ts";
import { routeMatch } from "./match.ts";
import type { NamedResource } from "./types.ts";
import { adsConfigSource, NameOrder, positionOf } from "./util.ts";
import { IdentityMemo, type MemoStats } from "../../../lib/memo/mod.ts";
import { ScopedMemo } from "./scoped.ts";

/** Options that shape route configurations. */
export interface RouteOptions {
  /** Request headers removed from every request (edge: aether's internal headers). */
  stripRequestHeaders: string[];
}

/** One Envoy `Route` for an IR route. */
export function route(r: IRRoute, listener: RouteListener = httpPort80): Record<string, unknown> {
  const action = r.action.kind === "forward"
    ? forwardAction(r.action, r.match)
    : r.action.kind === "redirect"
    ? redirectAction(r.action, r.match, listener)
    : directResponse(r.action);
  const out: Record<string, unknown> = { name: r.name, match: routeMatch(r.match), ...action };
  applyHeaderModifiers(out, r.requestHeaders, r.responseHeaders);
  return out;
}

/**
 * What translate remembers between translations (one per translator, e.g. a pipeline's): the
 * translated virtual host per IR virtual host — resolve hands out the same (read-only) object for
 * an unchanged one, so after a route edit only the edited virtual host is translated again — and
 * the VHDS resource per translated virtual host; in front of both, the VHDS resource per IR
 * virtual host, so an unchanged one of a 10k table costs one lookup (no name built, no closure).
 */
export class TranslateMemo {
  /** Clusters and load assignments of the last translation (cluster_memo.ts). */
  readonly clusters = new ClusterMemo();
  readonly virtualHosts = new IdentityMemo<
    IRVirtualHost,
    { listener: RouteListener; out: Record<string, unknown> }
  >();
  readonly served = new IdentityMemo<Record<string, unknown>, NamedResource>();
  /** The VHDS resource per IR virtual host, for its route table and listener. */
  readonly vhds = new IdentityMemo<
    IRVirtualHost,
    { table: string; listener: RouteListener; out: NamedResource }
  >();
  /** Per route table, its chain's virtual hosts last translated and their VHDS resources. */
  readonly chains = new Map<string, VhdsList>();
  /** The tables and scopes of chains served as scoped routes (scoped.ts). */
  readonly scoped = new ScopedMemo();
  /** IR virtual hosts found at their position of last time (hits) or looked up (misses). */
  readonly positions: MemoStats = { hits: 0, misses: 0 };
  /** The order of each output list (translate/mod.ts). */
  readonly order = {
    listeners: new NameOrder(),
    routes: new NameOrder(),
    virtualHosts: new NameOrder(),
    scopedRoutes: new NameOrder(),
    clusters: new NameOrder(),
    endpoints: new NameOrder(),
    secrets: new NameOrder(),
  };

  /** Forgets the route tables other than `tables` (the last translation's). */
  keepChains(tables: ReadonlySet<string>): void {
    for (const table of this.chains.keys()) if (!tables.has(table)) this.chains.delete(table);
  }
}

/** The VHDS resources of one chain's virtual hosts, position by position. */
interface VhdsList {
  readonly listener: RouteListener;
  readonly virtualHosts: readonly IRVirtualHost[];
  readonly out: readonly NamedResource[];
}

/**
 * One Envoy `VirtualHost` (no catch-all route: no match answers Envoy's 404). The result is
 * shared by every call with the same IR object and memo: never mutate it.
 */
export function virtualHost(
  vh: IRVirtualHost,
  listener: RouteListener = httpPort80,
  memo: TranslateMemo = new TranslateMemo(),
): Record<string, unknown> {
  return memo.virtualHosts.get(vh, () => ({
    listener,
    out: {
      name: vh.name,
      domains: [...vh.domains],
      routes: vh.routes.map((r) => route(r, listener)),
    },
  }), (seen) => seen.listener.scheme === listener.scheme && seen.listener.port === listener.port)
    .out;
}

/** The VHDS name (and vhost `name`) of a virtual host of a route configuration: `<rc>/<vhost>`. */
export function vhdsName(routeConfigName: string, vhostName: string): string {
  return `${routeConfigName}/${vhostName}`;
}

/**
 * The VirtualHost resources (VHDS) of one filter chain, in IR order: each {@link virtualHost}
 * named `<routeConfigName>/<vhost name>` (Envoy keys VHDS virtual hosts by `name`, which must
 * equal the resource name). `listener` is the chain's listener (scheme and port): redirect defaults come from it.
 * Shared like {@link virtualHost}: never mutate them. An IR virtual host that is the very object
 * at its position last time (for this route table), or one beside it (one added or removed
 * before it), is not looked at again.
 */
export function vhdsVirtualHosts(
  chain: IRHttpFilterChain,
  listener: RouteListener = httpPort80,
  memo: TranslateMemo = new TranslateMemo(),
): NamedResource[] {
  const table = chain.routeConfigName;
  const last = memo.chains.get(table);
  const was = last && sameListener(last.listener, listener) ? last : undefined;
  let shift = 0, hits = 0;
  const out = chain.virtualHosts.map((vh, i) => {
    const at = was === undefined
      ? undefined
      : was.virtualHosts[i + shift] === vh
      ? i + shift
      : positionOf(was.virtualHosts, vh, i + shift);
    if (at !== undefined) {
      shift = at - i;
      hits++;
      return was!.out[at];
    }
    memo.positions.misses++;
    const seen = memo.vhds.peek(vh);
    const hit = seen !== undefined && seen.table === table &&
      seen.listener.scheme === listener.scheme && seen.listener.port === listener.port;
    memo.vhds.count(hit);
    if (hit) return seen.out;
    const inner = virtualHost(vh, listener, memo);
    const name = vhdsName(table, vh.name);
    const out = memo.served.get(
      inner,
      () => ({ name, resource: { ...inner, name } }),
      (seen) => seen.name === name,
    );
    memo.vhds.set(vh, { table, listener, out });
    return out;
  });
  memo.positions.hits += hits;
  memo.vhds.hits += hits;
  memo.chains.set(table, { listener, virtualHosts: chain.virtualHosts, out });
  return out;
}

const sameListener = (a: RouteListener, b: RouteListener) =>
  a.scheme === b.scheme && a.port === b.port;

/**
 * The RouteConfiguration served over RDS for one filter chain: no inline virtual host, VHDS over
 * ADS (its virtual hosts are {@link vhdsVirtualHosts}). Its content does not change with routes.
 */
export function routeConfiguration(chain: IRHttpFilterChain, opts: RouteOptions): NamedResource {
  const resource: Record<string, unknown> = {
    name: chain.routeConfigName,
    vhds: { config_source: adsConfigSource() },
    ...routeTableBase(opts),
  };
  return { name: chain.routeConfigName, resource };
}

/** The fields every route table of aether's has, whatever its virtual hosts (scoped.ts too). */
export function routeTableBase(opts: RouteOptions): Record<string, unknown> {
  const base: Record<string, unknown> = {
    // Gateway hostnames carry no port; `Host: a.example:8080` must still match `a.example`.
    ignore_port_in_host_matching: true,
    // Invalid backends name missing clusters on purpose (they answer 500), so never reject.
    validate_clusters: { value: false },
  };
  if (opts.stripRequestHeaders.length) {
    base.request_headers_to_remove = [...opts.stripRequestHeaders];
  }
  return base;
}
