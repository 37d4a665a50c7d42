/**
 * The controller: Gateway API and GAMMA status written by the leader, per-Gateway edges (docs/kubernetes.md).
 * @module
 */
export { planStatus } from "./status_plan.ts";
export { edgeIdentityFlags, GATEWAY_LABEL } from "./edge.ts";
export { controllerDefaults, runController } from "./run.ts";
