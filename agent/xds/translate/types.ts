/**
 * Output types of the translator (re-exported by mod.ts).
 * @module
 */

/**
 * One Envoy resource with its xDS name, in protobufjs `fromObject` form: snake_case field names,
 * Any as `{"@type": "type.googleapis.com/…", …}`, Duration as `{seconds, nanos}`, wrapper types as
 * `{value}`, enums as numbers (enums.ts; the encoder verifies the plain object, which wants
 * numbers). The same type the xDS cache takes.
 */
export type { NamedResource } from "../cache/mod.ts";

/** Everything one proxy needs, each list sorted by name: LDS, RDS, CDS, EDS and SDS resources. */
export type { Resources as EnvoyResources } from "../cache/mod.ts";

import type { EdgeLimits } from "./edge_limits.ts";

/** Knobs for `translate`. Every field has a default; none depends on the clock or the host. */
export interface TranslateOptions {
  /** Prefix of every listener and HTTP connection manager stat prefix. Default "aether". */
  statPrefix?: string;
  /**
   * Edge hardening (default true): sanitize XFCC from clients, trust no client-supplied
   * forwarding headers (`use_remote_address`), strip aether's internal request headers.
   */
  edge?: boolean;
  /** Edge listener limits (with `edge`); unset fields take `edgeLimitDefaults`. */
  edgeLimits?: Partial<EdgeLimits>;
  /**
   * Serve an HTTP filter chain with at least this many virtual hosts, all of exact hostnames, as
   * one route table per host chosen by the request's host (scoped RDS, scoped.ts), so an edit makes
   * Envoy rebuild one host's table. 0: never. Default `DEFAULT_SCOPED_ROUTES_AT` (2,000).
   */
  scopedRoutesAt?: number;
  /**
   * Scoped chains' scopes on demand: Envoy fetches a host's table on its first request (Envoy's
   * memory and start then grow with the hosts used, not the hosts configured; a host's first
   * request waits for its table, and for the agent if it is away). Default false.
   */
  scopedRoutesOnDemand?: boolean;
  /** Upstream connect timeout in ms. Default 5000. */
  connectTimeoutMs?: number;
  /**
   * Dial endpoints that have an identity over SPIFFE mTLS at :15008 presenting `callerId`'s SVID
   * (the edge's own; SDS secret named by the ID). See docs/identity.md.
   */
  mtls?: { callerId: string; trustDomain: string };
}
