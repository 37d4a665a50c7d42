/**
 * The route-kind registry: every route kind aether serves, listed here explicitly (nothing
 * registers itself). A route kind is one conversion file exporting a `RouteKindDef` (routes/kind.ts) plus
 * one line in {@link ROUTE_KINDS}; attachment (attachment.ts, mesh/attachment.ts), precedence,
 * kind conflicts, backends and status are shared by every kind. resolve() takes the list as an
 * option (`routeKinds`), so a test can add a kind of its own.
 * @module
 */
import { GRPC_ROUTE } from "./grpc.ts";
import { HTTP_ROUTE } from "./http.ts";
import { TCP_ROUTE } from "./tcp.ts";
import { TLS_ROUTE } from "./tls.ts";
import { UDP_ROUTE } from "./udp.ts";
import type { RouteKindDef } from "./kind.ts";

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
