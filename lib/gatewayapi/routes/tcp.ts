/**
 * TCPRoute (v1alpha2): a TCP listener's connections go to the route's weighted backends through
 * Envoy's tcp_proxy; an invalid backend's share of connections is refused.
 * @module
 */
import { convertL4Route } from "../l4/route.ts";
import type { RouteKindDef } from "./kind.ts";

/** TCPRoute in the route-kind registry: TCP listeners, a `tcpProxy` chain. */
export const TCP_ROUTE: RouteKindDef = {
  kind: "TCPRoute",
  protocols: ["TCP"],
  chain: "tcpProxy",
  http2Backends: false,
  features: ["TCPRoute"],
  convert: (backends, route, mesh) => convertL4Route(backends, "TCPRoute", "TCP", route, mesh),
};
