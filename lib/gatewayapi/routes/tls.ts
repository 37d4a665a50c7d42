/**
 * TLSRoute (v1, Gateway API v1.5): connections chosen by SNI (route hostnames ∩ listener
 * hostname) go to weighted backends. On a Passthrough listener the bytes are forwarded as they
 * are (never decrypted); on a Terminate listener TLS ends at the edge with the listener's
 * certificates and the backend gets plaintext TCP.
 * @module
 */
import { convertL4Route } from "../l4/route.ts";
import type { RouteKindDef } from "./kind.ts";

/**
 * TLSRoute in the route-kind registry: TLS listeners; a `tlsPassthrough` chain (a Terminate
 * listener places it into a `tcpProxy` chain with the listener's certificates instead).
 */
export const TLS_ROUTE: RouteKindDef = {
  kind: "TLSRoute",
  protocols: ["TLS"],
  chain: "tlsPassthrough",
  http2Backends: false,
  features: ["TLSRoute", "TLSRouteModeMixed", "TLSRouteModeTerminate"],
  convert: (backends, route, mesh) => convertL4Route(backends, "TLSRoute", "TCP", route, mesh),
};
