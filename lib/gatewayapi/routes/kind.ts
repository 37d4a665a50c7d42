/**
 * The contract of a route kind: {@link RouteKindDef} (what resolve needs to know of one kind) and
 * the converted shapes its `convert` returns, which the IR builder consumes. The kinds' conversion
 * files, the registry (routes/registry.ts) and the shared attachment and rendering code import it;
 * it imports none of them.
 * @module
 */
import type { Backends, ClusterUse, NameConflict } from "../backends.ts";
import type { Outcome } from "../status/mod.ts";
import type { Obj } from "../object_index.ts";
import type {
  IRBackend,
  IRFilterChain,
  IRHeaderModifier,
  IRListenerProtocol,
  IRRoute,
  IRRouteMatch,
} from "../../ir/mod.ts";

/** A route kind's name, e.g. "HTTPRoute" (one of the registry's `kind`s). */
export type RouteKind = string;

/** What resolve needs to know of one route kind. */
export interface RouteKindDef {
  /** The kind, e.g. "HTTPRoute" (group gateway.networking.k8s.io). */
  readonly kind: RouteKind;
  /** Listener protocols whose supportedKinds include this kind (when allowedRoutes is open). */
  readonly protocols: readonly IRListenerProtocol[];
  /** The IR filter chain its rules are placed into. */
  readonly chain: IRFilterChain["kind"];
  /** Its backends speak HTTP/2 (their clusters become http2), as gRPC does. */
  readonly http2Backends: boolean;
  /** GatewayClass supportedFeatures this kind brings. */
  readonly features: readonly string[];
  /**
   * Converts one route's rules (for Gateway parents, or with `mesh` for Service parents). Pure:
   * the result depends only on the route and what `backends.resolve` answers (it reads the other
   * objects through that one call, whose lookups the conversion memo checks on a later resolve).
   */
  convert(backends: Backends, route: Obj<never>, mesh: boolean): ConvertedRoute;
}

/** The listener a rule is being rendered for (redirects depend on it). */
export interface ListenerContext {
  port: number;
  protocol: "HTTP" | "HTTPS";
}

/** One match of a rule, with its IR name and precedence key. */
export interface ConvertedMatch {
  name: string;
  match: IRRouteMatch;
  key: number[];
}

/** One rule, ready to be placed into virtual hosts. */
export interface ConvertedRule {
  matches: ConvertedMatch[];
  requestHeaders?: IRHeaderModifier;
  responseHeaders?: IRHeaderModifier;
  action: (listener: ListenerContext) => IRRoute["action"];
}

/**
 * A converted route: its rules, the ResolvedRefs / Accepted (UnsupportedValue) outcomes, and what
 * its references need of the resolve (clusters to make, mesh-name conflicts to report) as data.
 */
export interface ConvertedRoute {
  rules: ConvertedRule[];
  /** An L4 kind's (TCPRoute, TLSRoute, UDPRoute) weighted backends; its `rules` are empty. */
  l4Backends?: IRBackend[];
  clusters: ClusterUse[];
  conflicts: NameConflict[];
  resolvedRefs: Outcome;
  /** Set when the route uses something aether does not support (Accepted=False UnsupportedValue). */
  unsupported?: Outcome;
}
