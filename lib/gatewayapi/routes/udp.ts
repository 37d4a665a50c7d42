/**
 * UDPRoute (v1alpha2): a UDP listener's datagrams go to the route's weighted backends through
 * Envoy's udp_proxy listener filter. Each downstream source address:port is one session, pinned
 * to the upstream host picked for its first datagram until it idles out (docs/l4.md).
 * @module
 */
import { convertL4Route } from "../l4/route.ts";
import type { RouteKindDef } from "./kind.ts";

/** UDPRoute in the route-kind registry: UDP listeners, a `udpProxy` chain, UDP Service ports. */
export const UDP_ROUTE: RouteKindDef = {
  kind: "UDPRoute",
  protocols: ["UDP"],
  chain: "udpProxy",
  http2Backends: false,
  features: ["UDPRoute"],
  convert: (backends, route, mesh) => convertL4Route(backends, "UDPRoute", "UDP", route, mesh),
};
