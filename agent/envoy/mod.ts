/**
 * Envoy as a supervised child: locating the binary, starting and adopting it across agent restarts, its state directory and log tail.
 * @module
 */
export { EnvoyProcess, recordedEnvoy } from "./process.ts";
export {
  type AgentRecord,
  claimStateDir,
  cleanStaleStateDirs,
  defaultStateDir,
  type EnvoyRecord,
  isSameProcess,
  processStartTime,
  readRecord,
  statePaths,
  tempStatePrefix,
} from "./state.ts";
export { locateEnvoy } from "./locate.ts";
export {
  concurrencyArgs,
  type EnvoyConcurrency,
  parseEnvoyConcurrency,
  resolveEnvoyConcurrency,
} from "./concurrency.ts";
