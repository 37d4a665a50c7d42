/**
 * A route placed on a listener: what resolve hands the IR builders (build_ir.ts for HTTP and
 * HTTPS, l4/build.ts for TLS, TCP and UDP), in a module of its own so neither builder imports
 * the other for it.
 * @module
 */
import type { ListenerState } from "./gateways.ts";
import type { ConvertedRoute } from "./routes/kind.ts";
import type { KubeObject } from "./types.ts";

/** A route accepted on one listener, serving these hostnames. */
export interface Placement {
  readonly route: KubeObject;
  readonly converted: ConvertedRoute;
  readonly listener: ListenerState;
  /** May be shared with a remembered attachment: read-only. */
  hostnames: readonly string[];
}
