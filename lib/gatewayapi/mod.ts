/**
 * Gateway API v1.5.1 for aether: the object model, CRD defaults and validation, and the pure
 * `resolve()` from Gateway API objects to aether's IR with status as data.
 *
 * ```ts
 * import { resolve } from "./mod.ts";
 * const { ir, statuses, problems } = resolve(objects, { bindAddress: "127.0.0.1" });
 * ```
 * @module
 */
export type * from "./types.ts";
export type * from "./core_types.ts";
export { GATEWAY_GROUP } from "./types.ts";
export { applyDefaults, validateObject } from "./admission/mod.ts";
export { ADMISSION_KINDS } from "./read_kinds.ts";
export { type ObjectStatus, resolve, type ResolveOptions, type ResolveResult } from "./resolve.ts";
export { EDIT_MAX_ROUTES, resolveEdit, type ResolvePath } from "./edit.ts";
export { CelNotLoaded, CelRules } from "./admission/mod.ts";
export { ResolveState } from "./state/mod.ts";
export type { MemoStats } from "../memo/mod.ts";
export { SUPPORTED_FEATURES } from "./gateways.ts";
export { ROUTE_KINDS, servedRouteKinds } from "./routes/registry.ts";
export type { RouteKindDef } from "./routes/kind.ts";
export { MESH_CONTROLLER_NAME } from "./mesh/attachment.ts";
export { MESH_FEATURES, type XMeshSpec, xmeshStatus } from "./mesh/xmesh.ts";
export { compareHostnames, covers, intersectHostname, routeHostnames } from "./hostnames.ts";
export { parseDuration } from "./duration.ts";
export { mergeConditions, mergeStatus, parentKey, withOtherParents } from "./status/mod.ts";
export {
  NETNS_ANNOTATION,
  POD_NETWORK_API_VERSION,
  POD_NETWORK_KIND,
  podNetworkObject,
  type PodNetworkSpec,
  podsOnNode,
} from "./mesh/pods.ts";
export { HTTP_ROUTE } from "./routes/http.ts";
