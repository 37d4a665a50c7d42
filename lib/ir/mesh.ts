/**
 * East-west (GAMMA) IR: what every node proxy needs to route mesh traffic, before it is cut down
 * to one node's pods and dependency set. `resolve` builds it from Services, EndpointSlices and
 * routes whose parentRef is a Service; the node translator turns one node's view into Envoy
 * resources. Same route vocabulary as the edge (IRRoute), so the same translation code serves
 * both. Lists are sorted deterministically.
 * @module
 */
import type { IRBackend, IRCluster, IRRoute } from "./types.ts";

/** Every mesh service with its per-port routing, plus every cluster a route may reach. */
export interface MeshIR {
  /** Mesh services, sorted by authority. */
  services: MeshService[];
  /**
   * Every service-port cluster (one per MeshServicePort, named as its `cluster`), sorted by name.
   * Backends of routes are among them.
   */
  clusters: IRCluster[];
  /**
   * The port clusters of every Service without a mesh name (an older same-named Service owns
   * `<svc>.<meshDomain>`), named `<svc>.<namespace>.<meshDomain>[:<port>]`, sorted by name;
   * absent when there is none. No mesh service, route or caller reaches them (mesh routes refuse
   * such a Service); they exist because a Gateway route's namespaced backendRef still does, so
   * with identity each node proxy accepts the edge's mTLS to their pods under that name (SNI
   * `<port>.<svc>.<namespace>.<meshDomain>` on `podIP:15008`).
   */
  namespacedClusters?: IRCluster[];
}

/** One Kubernetes Service under its mesh-global name. */
export interface MeshService {
  /** `<svc>.<meshDomain>`: namespace-free, unique mesh-wide. */
  authority: string;
  namespace: string;
  name: string;
  /** The Service's cluster IPs (VIPs), for DNS and transparent capture. */
  vips: string[];
  /** Ports in the Service's order; the first one is the default (bare authority). */
  ports: MeshServicePort[];
}

/** Routing for one port of a mesh service. */
export interface MeshServicePort {
  port: number;
  /**
   * The Service port's `appProtocol` as written, absent when unset: how the node proxy's capture
   * listener treats a connection to this port (HTTP, h2c/gRPC or TCP; sniffed when absent or
   * unknown).
   */
  appProtocol?: string;
  /** The Service port's `protocol` when not TCP (`UDP`, `SCTP`): such a port is not captured. */
  protocol?: string;
  /** Cluster name: the bare authority for the first port, `<authority>:<port>` for the others. */
  cluster: string;
  /**
   * Domains of this port's virtual host: `<authority>:<port>` always, plus the bare authority for
   * the first port; none for a UDP or SCTP port (no virtual host: it carries no HTTP).
   */
  domains: string[];
  /**
   * Producer routes (routes in the Service's namespace with this Service as parent, for this port
   * or all ports), in Gateway API precedence order. They apply to callers in every namespace that
   * has no consumer routes for this service. Empty = no producer route. When the list a caller
   * sees (consumer routes, else these) is empty, the port's virtual host is a single default
   * route to `cluster` (no route attached = pass-through); otherwise a request that matches none
   * of its rules answers 404 (GAMMA).
   */
  producerRoutes: IRRoute[];
  /**
   * Consumer routes by caller namespace (routes in another namespace with this Service as
   * parent), each list in precedence order. For a caller in such a namespace they replace the
   * producer routes.
   */
  consumerRoutes: Record<string, IRRoute[]>;
  /**
   * Mesh L4: the weighted backends of the TCPRoute on this port for every caller (the oldest
   * producer TCPRoute), absent when there is none. A port with a TCPRoute (producer or consumer)
   * carries opaque TCP on the capture path: each connection goes to one backend by weight, never
   * to the HTTP routes.
   */
  producerTcp?: IRBackend[];
  /** Mesh L4: the oldest consumer TCPRoute's backends by caller namespace (they replace the producer's). */
  consumerTcp?: Record<string, IRBackend[]>;
  /**
   * Mesh L4: the producer TLSRoutes on this port, oldest first, absent when there is none. A port
   * with a TLSRoute carries TLS on the capture path: a connection goes by its SNI to the route
   * holding that name, by weight to one of its backends (never decrypted); a name no route holds
   * goes to the port's own endpoints.
   */
  producerTls?: MeshTlsRoute[];
  /** Mesh L4: consumer TLSRoutes by caller namespace (they replace the producer's). */
  consumerTls?: Record<string, MeshTlsRoute[]>;
  /**
   * Mesh L4 on a UDP port: the oldest producer UDPRoute, absent when there is none. A UDP port
   * with a UDPRoute (producer or consumer) is captured: its datagrams go to the node proxy's UDP
   * listener for the port, which sends each session to one backend by weight.
   */
  producerUdp?: MeshUdpRoute;
  /** Mesh L4: the oldest consumer UDPRoute by caller namespace (it replaces the producer's). */
  consumerUdp?: Record<string, MeshUdpRoute>;
}

/** One UDPRoute on a mesh service port: its weighted backends and the cluster serving them. */
export interface MeshUdpRoute {
  /** `<namespace>/<name>` of the route. */
  name: string;
  backends: IRBackend[];
  /**
   * The one cluster its datagrams go to (udp_proxy sends a listener's datagrams to one cluster):
   * with several carrying backends a merged cluster (endpoints weighted by backend weight), else
   * the one carrying backend's cluster; absent when no backend carries weight (refused).
   */
  cluster?: string;
}

/** One TLSRoute on a mesh service port: the SNI names it holds and its weighted backends. */
export interface MeshTlsRoute {
  /** `<namespace>/<name>` of the route. */
  name: string;
  /** Its hostnames (exact or `*.` wildcards), matched against the connection's SNI. */
  hostnames: string[];
  backends: IRBackend[];
}

/**
 * The routes a caller in `namespace` gets for one service port: the namespace's consumer routes
 * when it has any (they replace the producer routes), else the producer routes. Pure over the
 * IR: the node translator renders them, demand scoping follows their backends.
 */
export function callerRoutes(port: MeshServicePort, namespace: string): IRRoute[] {
  return port.consumerRoutes[namespace] ?? port.producerRoutes;
}

/**
 * The TCPRoute backends a caller in `namespace` gets for one service port (its namespace's consumer
 * TCPRoute, else the producer's), undefined when neither exists.
 */
export function callerTcpBackends(
  port: MeshServicePort,
  namespace: string,
): IRBackend[] | undefined {
  return port.consumerTcp?.[namespace] ?? port.producerTcp;
}

/** Whether any TCPRoute is on the port: the capture path then carries it as opaque TCP. */
export function hasTcpRoutes(port: MeshServicePort): boolean {
  return port.producerTcp !== undefined || Object.keys(port.consumerTcp ?? {}).length > 0;
}

/**
 * The TLSRoutes a caller in `namespace` gets for one service port (its namespace's consumer
 * TLSRoutes, else the producer's), empty when neither exists.
 */
export function callerTlsRoutes(port: MeshServicePort, namespace: string): MeshTlsRoute[] {
  return port.consumerTls?.[namespace] ?? port.producerTls ?? [];
}

/** Whether any TLSRoute is on the port: the capture path then routes it by SNI. */
export function hasTlsRoutes(port: MeshServicePort): boolean {
  return port.producerTls !== undefined || Object.keys(port.consumerTls ?? {}).length > 0;
}

/**
 * The UDPRoute a caller in `namespace` gets for one service port (its namespace's consumer
 * UDPRoute, else the producer's), undefined when neither exists.
 */
export function callerUdpRoute(port: MeshServicePort, namespace: string): MeshUdpRoute | undefined {
  return port.consumerUdp?.[namespace] ?? port.producerUdp;
}

/** Whether any UDPRoute is on the port: the capture path then carries its datagrams. */
export function hasUdpRoutes(port: MeshServicePort): boolean {
  return port.producerUdp !== undefined || Object.keys(port.consumerUdp ?? {}).length > 0;
}

/**
 * Every cluster a caller in `namespace` may reach through one service port: its HTTP routes'
 * backends and mirrors, its TCPRoute's and TLSRoutes' backends and its UDPRoute's cluster (what
 * demand scoping follows).
 */
export function callerBackendClusters(port: MeshServicePort, namespace: string): string[] {
  const out: string[] = [];
  for (const r of callerRoutes(port, namespace)) {
    if (r.action.kind !== "forward") continue;
    for (const c of [...r.action.backends, ...r.action.mirrors]) out.push(c.cluster);
  }
  for (const b of callerTcpBackends(port, namespace) ?? []) out.push(b.cluster);
  for (const r of callerTlsRoutes(port, namespace)) for (const b of r.backends) out.push(b.cluster);
  const udp = callerUdpRoute(port, namespace)?.cluster;
  if (udp) out.push(udp);
  return out;
}

/** A pod a node proxy serves: its namespace picks the consumer routes it sees. */
export interface NodePod {
  namespace: string;
  name: string;
  /** The pod's network namespace (e.g. `/var/run/netns/<id>`); its listeners bind inside it. */
  netnsPath: string;
  /** The pod IP, when known. */
  ip?: string;
  /** The pod's service account (`spec.serviceAccountName`, default `default`): its identity. */
  serviceAccount?: string;
}

/** One node proxy's slice of the mesh. */
export interface NodeView {
  /** The Envoy node id (the node name). */
  nodeId: string;
  /** Pods on this node, sorted by namespace then name. */
  pods: NodePod[];
  /** Authorities in the node's dependency set, sorted. Only these get clusters and vhosts. */
  dependencies: string[];
  /**
   * With identity, per caller key (`<namespace>/<serviceAccount>`): the part of `dependencies`
   * that caller's own demand closes to, the only services it gets caller clusters for (each is an
   * mTLS cluster with that caller's certificate: identities × services would not fit). A caller
   * without an entry gets caller clusters for all of `dependencies`.
   */
  callerDependencies?: Readonly<Record<string, readonly string[]>>;
}
