/**
 * The MCS controller: ServiceExports → the registry, the registry → ServiceImports with a local
 * clusterset VIP, and ServiceExport status (KEP-1645).
 * @module
 */
export { McsController, type McsControllerOptions } from "./mcs.ts";
export { type McsPlan, planMcs } from "./plan.ts";
