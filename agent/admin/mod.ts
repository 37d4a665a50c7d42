/**
 * The agent's admin server: /healthz, /readyz (Envoy ACKed the current config), /status, /debug/xds, /metrics.
 * @module
 */
export { type AdminServer, splitHostPort, startAdmin } from "./server.ts";
export { xdsDebug } from "./xds_debug.ts";
