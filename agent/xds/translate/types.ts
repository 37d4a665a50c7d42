/**
 * Output types of the translator (re-exported by mod.ts).
 * @module
 */

/**
 * One Envoy resource with its xDS name. `resource` is in protobufjs `fromObject` form: snake_case
 * field names, Any as `{"@type": "type.googleapis.com/…", …}`, Duration as `{seconds, nanos}`,
 * wrapper types as `{value}`, enums as their numbers (see enums.ts: the encoder verifies the plain object, which wants numbers).
 */
export interface NamedResource {
  name: string;
  resource: Record<string, unknown>;
}

/** Everything one proxy needs, each list sorted by name. */
export interface EnvoyResources {
  /** `envoy.config.listener.v3.Listener` (LDS). */
  listeners: NamedResource[];
  /** `envoy.config.route.v3.RouteConfiguration` (RDS). */
  routes: NamedResource[];
  /** `envoy.config.cluster.v3.Cluster` (CDS). */
  clusters: NamedResource[];
  /** `envoy.config.endpoint.v3.ClusterLoadAssignment` (EDS). */
  endpoints: NamedResource[];
  /** `envoy.extensions.transport_sockets.tls.v3.Secret` (SDS). */
  secrets: NamedResource[];
}

/** Knobs for `translate`. Every field has a default; none depends on the clock or the host. */
export interface TranslateOptions {
  /** Prefix of every listener and HTTP connection manager stat prefix. Default "aether". */
  statPrefix?: string;
  /**
   * Edge hardening (default true): sanitize XFCC from clients, trust no client-supplied
   * forwarding headers (`use_remote_address`), strip aether's internal request headers.
   */
  edge?: boolean;
  /** Upstream connect timeout in ms. Default 5000. */
  connectTimeoutMs?: number;
}
