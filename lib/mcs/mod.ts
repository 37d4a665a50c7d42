/**
 * Multi-Cluster Services (KEP-1645) as pure functions: a cluster's export record of a Service,
 * and the merge of every cluster's exports into one clusterset service with its conflicts.
 * @module
 */
export * from "./types.ts";
export {
  exportRecord,
  type InvalidExport,
  isInvalidExport,
  parseExportRecord,
  type ServiceExportShape,
  type ServiceShape,
} from "./export_record.ts";
export { exportOrder, type MergedService, mergeExports, mergePorts } from "./merge.ts";
export {
  type EndpointRecord,
  endpointRecords,
  type EndpointSliceShape,
  parseEndpointRecord,
  type PodIdentity,
} from "./endpoints.ts";
export {
  CLUSTER_SET_ENDPOINTS_API,
  type ClusterSetEndpointEntry,
  clusterSetEndpoints,
} from "./clusterset_endpoints.ts";
export { ClusterSetIndex } from "./clusterset_index.ts";
export {
  clustersetSni,
  gatewayAddressProblem,
  type GatewayedEndpoint,
  gatewayEndpoints,
  parseGatewayAddress,
} from "./east_west.ts";
export {
  type HTTPRouteShape,
  parseRouteRecord,
  producerRouteEntries,
  producerRouteRecord,
  ROUTE_RECORD_VERSION,
  type RouteParent,
  type RouteRecord,
} from "./route_record.ts";
export {
  type ImportedRoute,
  importedRoute,
  importedRouteName,
  importedRoutes,
  ROUTE_ORIGIN_ANNOTATION,
} from "./route_import.ts";
