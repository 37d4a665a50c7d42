/**
 * aether's IR: the plain data resolve produces and translate consumes — listeners with their filter chains, clusters and secrets (types.ts), and the MeshIR of east-west services and node views (mesh.ts, mesh_udp.ts).
 * @module
 */
export {
  type MeshIR,
  type MeshService,
  type MeshServicePort,
  type MeshTlsRoute,
  type MeshUdpRoute,
  type NodePod,
  type NodeView,
} from "./mesh.ts";
export {
  type IR,
  type IRBackend,
  type IRCluster,
  type IRDirectAction,
  type IREndpoint,
  type IRFilterChain,
  type IRForwardAction,
  type IRHeaderModifier,
  type IRHttpFilterChain,
  type IRKeyValueMatch,
  type IRListener,
  type IRListenerProtocol,
  type IRMirror,
  type IRRedirectAction,
  type IRRetry,
  type IRRoute,
  type IRRouteMatch,
  type IRSecret,
  type IRTcpProxyFilterChain,
  type IRTlsPassthroughFilterChain,
  type IRUdpProxyFilterChain,
  type IRVirtualHost,
} from "./types.ts";
export {
  callerBackendClusters,
  callerRoutes,
  callerTcpBackends,
  callerTlsRoutes,
  callerUdpRoute,
  hasTcpRoutes,
  hasTlsRoutes,
  hasUdpRoutes,
} from "./mesh.ts";
export {
  callerUdpCluster,
  mergedUdpClusterOf,
  portOwnedClusters,
  portUdpRoutes,
  UDP_LOCAL_PORT_BASE,
  UDP_LOCAL_PORT_COUNT,
  udpAuthorities,
  type UdpTarget,
  udpTargets,
} from "./mesh_udp.ts";
