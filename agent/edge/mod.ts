/**
 * The edge role (`agent standalone`): Gateway API in, one xDS snapshot to the edge Envoy, mesh DNS, status on the admin port (docs/standalone.md).
 * @module
 */
export { standaloneDefaults } from "./defaults.ts";
export { runStandalone, type StandaloneAgent } from "./run.ts";
export { type StandaloneOptions } from "./options.ts";
