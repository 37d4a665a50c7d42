/**
 * The route-kind registry: every route kind aether serves, listed here explicitly (nothing
 * registers itself). A route kind is one conversion file exporting a {@link RouteKindDef} plus
 * one line in {@link ROUTE_KINDS}; attachment (attachment.ts, mesh_attachment.ts), precedence,
 * kind conflicts, backends and status are shared by every kind. resolve() takes the list as an
 * option (`routeKinds`), so a test can add a kind of its own.
 * @module
 */
import type { Backends } from "./backends.ts";
import { GRPC_ROUTE } from "./grpc_route.ts";
import { HTTP_ROUTE } from "./http_route.ts";
import { TCP_ROUTE } from "./tcp_route.ts";
import { TLS_ROUTE } from "./tls_route.ts";
import { UDP_ROUTE } from "./udp_route.ts";
import type { ConvertedRoute } from "./rule_common.ts";
import type { Obj } from "./object_index.ts";
import type { KubeObject, Problem } from "./types.ts";
import type { IRFilterChain, IRListenerProtocol } from "../ir/types.ts";

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
  /**
   * Admission of a kind the CRD schemas do not describe (a test-only kind); absent = the CRD
   * schema and CEL rules, as for every Gateway API kind.
   */
  readonly admit?: (raw: KubeObject) => { obj: KubeObject; problems: Problem[] };
}

/** The route kinds aether serves, in the order status and supportedKinds list them. */
export const ROUTE_KINDS: readonly RouteKindDef[] = [
  HTTP_ROUTE,
  GRPC_ROUTE,
  TLS_ROUTE,
  TCP_ROUTE,
  UDP_ROUTE,
];

/**
 * The route kinds to serve when a source can deliver only `available` kinds (the API-server
 * source: those whose CRD is installed): the registry's kinds among them, in registry order.
 * `available` undefined (file mode, every kind known) serves them all.
 */
export function servedRouteKinds(
  available: readonly string[] | undefined,
  kinds: readonly RouteKindDef[] = ROUTE_KINDS,
): readonly RouteKindDef[] {
  if (available === undefined) return kinds;
  const known = new Set(available);
  return kinds.filter((k) => known.has(k.kind));
}
