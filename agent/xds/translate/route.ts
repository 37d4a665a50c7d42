/**
 * RouteConfigurations (RDS): one per IRFilterChain, virtual hosts and routes in IR order.
 * @module
 */
import type { IRFilterChain, IRRoute, IRVirtualHost } from "../../../lib/ir/types.ts";
import { directResponse, forwardAction, redirectAction } from "./action.ts";
import { applyHeaderModifiers } from "./headers.ts";
import { routeMatch } from "./match.ts";
import type { NamedResource } from "./types.ts";

/** Options that shape route configurations. */
export interface RouteOptions {
  /** Request headers removed from every request (edge: aether's internal headers). */
  stripRequestHeaders: string[];
  /** Scheme of the listener these routes serve; a redirect without a scheme keeps it. */
  scheme: "http" | "https";
}

/** One Envoy `Route` for an IR route. */
export function route(r: IRRoute, scheme: "http" | "https" = "http"): Record<string, unknown> {
  const action = r.action.kind === "forward"
    ? forwardAction(r.action, r.match)
    : r.action.kind === "redirect"
    ? redirectAction(r.action, r.match, scheme)
    : directResponse(r.action);
  const out: Record<string, unknown> = { name: r.name, match: routeMatch(r.match), ...action };
  applyHeaderModifiers(out, r.requestHeaders, r.responseHeaders);
  return out;
}

/**
 * Translated virtual hosts by IR virtual host: resolve hands out the same (read-only) object for
 * an unchanged one, so after a route edit only the edited virtual host is translated again.
 */
const translated = new WeakMap<IRVirtualHost, { scheme: string; out: Record<string, unknown> }>();

/**
 * One Envoy `VirtualHost` (no catch-all route: no match answers Envoy's 404). The result is
 * shared by every call with the same IR object: never mutate it.
 */
export function virtualHost(
  vh: IRVirtualHost,
  scheme: "http" | "https" = "http",
): Record<string, unknown> {
  const seen = translated.get(vh);
  if (seen?.scheme === scheme) return seen.out;
  const out = {
    name: vh.name,
    domains: [...vh.domains],
    routes: vh.routes.map((r) => route(r, scheme)),
  };
  translated.set(vh, { scheme, out });
  return out;
}

/** The RouteConfiguration served over RDS for one filter chain. */
export function routeConfiguration(chain: IRFilterChain, opts: RouteOptions): NamedResource {
  const resource: Record<string, unknown> = {
    name: chain.routeConfigName,
    virtual_hosts: chain.virtualHosts.map((vh) => virtualHost(vh, opts.scheme)),
    // Gateway hostnames carry no port; `Host: a.example:8080` must still match `a.example`.
    ignore_port_in_host_matching: true,
    // Invalid backends name missing clusters on purpose (they answer 500), so never reject.
    validate_clusters: { value: false },
  };
  if (opts.stripRequestHeaders.length) {
    resource.request_headers_to_remove = [...opts.stripRequestHeaders];
  }
  return { name: chain.routeConfigName, resource };
}
