/**
 * The standalone agent's flag defaults, apart from run.ts so that `agent --help` and the flag
 * parser need not load the runtime.
 * @module
 */
import type { StandaloneOptions } from "./options.ts";

/** Defaults for every flag. */
export const standaloneDefaults: Omit<StandaloneOptions, "config" | "source" | "logger"> = {
  envoy: "auto",
  bindAddress: "127.0.0.1",
  adminAddress: "127.0.0.1:15000",
  xdsAddress: "127.0.0.1:18000",
  nodeId: "aether-standalone",
  meshDomain: "aether.internal",
  dnsAddress: "127.0.0.1:18054",
};
