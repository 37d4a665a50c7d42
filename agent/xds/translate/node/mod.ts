/**
 * translate/node: one node proxy's slice of the mesh (MeshIR + NodeView) → Envoy resources. Pure
 * and deterministic, like the edge translator, whose route, cluster and endpoint code it reuses.
 *
 * Names an integrator relies on:
 * - Listener `outbound|<namespace>/<pod>`: `127.0.0.1:18081` inside the pod's netns;
 * - RouteConfiguration `outbound.<namespace>`: one per caller namespace among the node's pods,
 *   VHDS turned on, no inline virtual host;
 * - VirtualHost (VHDS) `outbound.<namespace>/<cluster>` per service port of the dependency set
 *   (domains from the IR);
 * - Cluster and ClusterLoadAssignment: the IR cluster name, `<authority>` or `<authority>:<port>`.
 *
 * Caller namespace: one listener per pod, bound in the pod's netns, rather than one shared
 * listener guessing the caller from the source address (every pod dials 127.0.0.1, so addresses
 * say nothing). The listener is the caller: its HCM names the namespace's route table, and the
 * same listener is where the pod's identity will pick its outbound SVID (mTLS, later). Route
 * tables are per namespace, not per pod, so pods of one namespace share one RDS resource.
 *
 * Cold services, on-demand VHDS: a Host no virtual host serves matches no route, so the
 * on-demand filter pauses the request and subscribes to `outbound.<namespace>/<host>` on the
 * VHDS stream; the xDS server's `onDemand` hook grows the node's set, the server sends the new
 * clusters and endpoints, waits for their ACK (make-before-break), then sends the virtual host
 * listing that name in `aliases`, and Envoy restarts the request against it, so its routes hold
 * from the very first request. A Host that names no service is answered "not found" and gets
 * Envoy's 404 at once. (The earlier catch-all `*` routing by `:authority` with on-demand CDS sent
 * the first request to the service's own endpoints, bypassing its routes; and a `*` vhost would
 * keep VHDS from ever being asked.)
 *
 * Transparent capture (`capture`): per pod also a listener `capture|<namespace>/<pod>` on
 * `127.0.0.1:<port>` inside its netns, where its nftables rules redirect TCP to mesh VIP:ports;
 * chains per VIP service port, picked by the dialled address (capture.ts, capture_match.ts),
 * HTTP ones on RouteConfigurations `capture.<caller>/<cluster>`; and per captured UDP service
 * port (one with a UDPRoute) a UDP listener `capture-udp|<namespace>/<pod>|<cluster>` on its local
 * port (capture_udp.ts), whose clusters are always warm. Chains and route tables exist
 * for every VIP service port of the mesh (the matcher is one lookup; each route table is one
 * port's routes), while clusters stay demand-scoped: one outside the dependency set is fetched
 * over on-demand CDS by the first request or connection that names it, which waits for it. A
 * port that is not known HTTP also gets a raw-TCP chain at every inbound listener it has.
 *
 * Why every service vhost is served by VHDS rather than warm ones inline in RDS: Envoy merges
 * inline and VHDS vhosts into one table and rejects duplicate domains, so a vhost fetched on
 * demand could not later move inline; with VHDS only, RDS never changes as the set grows, a
 * route change on svc is a one-vhost delta, and each vhost is sent only to nodes holding svc.
 * @module
 */
import {
  callerBackendClusters,
  type MeshIR,
  type MeshService,
  type NodeView,
} from "../../../../lib/ir/mod.ts";
import type { IRCluster } from "../../../../lib/ir/mod.ts";
import { cluster, refusingCluster } from "../cluster.ts";
import { loadAssignment } from "../endpoint.ts";
import type { EnvoyResources, NamedResource } from "../types.ts";
import { sortedByName } from "../util.ts";
import { outboundListener } from "./listener.ts";
import {
  type Caller,
  callerCluster,
  outboundRouteConfiguration,
  outboundVirtualHosts,
} from "./routes.ts";
import {
  inboundCluster,
  inboundInternalListeners,
  inboundListener,
  type InboundPort,
  inboundPorts,
} from "./inbound.ts";
import { localizeEndpoints } from "./local.ts";
import { DEFAULT_ID_TEMPLATE, spiffeIdFor } from "../mtls.ts";
import { captureListener, captureRouteConfiguration, passthroughCluster } from "./capture.ts";
import { type CaptureTarget, captureTargets } from "./capture_match.ts";
import { captureUdpListeners, udpCaptureClusters } from "./capture_udp.ts";
import { udpTargets } from "../../../../lib/ir/mod.ts";

export { outboundListenerName, outboundRouteName } from "./listener.ts";
export {
  inboundClusterName,
  inboundInternalListenerName,
  inboundListenerName,
  inboundPorts,
} from "./inbound.ts";
export { localizeEndpoints } from "./local.ts";
export {
  captureListenerName,
  captureRouteName,
  PASSTHROUGH_CHAIN,
  PASSTHROUGH_CLUSTER,
} from "./capture.ts";
export { captureUdpListenerName } from "./capture_udp.ts";
export {
  type CaptureProtocol,
  captureProtocol,
  type CaptureTarget,
  captureTargets,
  httpChainName,
  tcpChainName,
} from "./capture_match.ts";
export {
  type Caller,
  callerCluster,
  defaultRoute,
  notFoundRoute,
  outboundVirtualHostName,
  portRoutes,
} from "./routes.ts";

/** A node's resources: the edge's five lists plus its VHDS virtual hosts, each sorted by name. */
export type NodeResources = EnvoyResources & { virtualHosts: NamedResource[] };

/** Knobs of {@link translateNode}; every field has a default. */
export interface NodeTranslateOptions {
  /** Prefix of listener and HCM stat prefixes. Default "aether". */
  statPrefix?: string;
  /** Upstream connect timeout in ms. Default 5000. */
  connectTimeoutMs?: number;
  /** Explicit-egress address inside each pod. Default 127.0.0.1. */
  egressAddress?: string;
  /** Explicit-egress port inside each pod. Default 18081. */
  egressPort?: number;
  /**
   * SPIFFE identity (docs/identity.md). With it, each caller identity (namespace + service
   * account) gets its own route table and clusters `<cluster>|<ns>/<sa>` presenting its SVID,
   * endpoints with an identity are dialled over mTLS at :15008, and every pod with an IP that
   * backs a service (with or without a mesh name: `mesh.namespacedClusters`) gets an inbound
   * mTLS listener at `podIP:15008` (plus, with `internalListeners`, internal listeners that this
   * node's own callers reach it through).
   */
  identity?: NodeIdentityOptions;
  /**
   * The node's Envoy has the `envoy.bootstrap.internal_listener` bootstrap extension (it
   * advertised the `internal_listener` capability, agent/xds/server/capabilities.ts): same-node
   * mTLS hops go through internal inbound listeners (local.ts). Default false: they dial
   * `podIP:15008` over TCP, which an Envoy started from any bootstrap accepts.
   */
  internalListeners?: boolean;
  /**
   * Transparent capture: per pod a capture listener inside its netns (see the module doc). Off
   * by default.
   */
  capture?: NodeCaptureOptions;
}

/** Capture knobs of the node translator (plain data). */
export interface NodeCaptureOptions {
  /** The port the pods' nftables rules redirect mesh VIP:ports to (15001). */
  port: number;
  /**
   * How long the TLS and HTTP inspectors wait for the first bytes on a port whose protocol is not
   * declared (no appProtocol) before the connection goes to the port's TCP chain. Default 1000.
   */
  detectionTimeoutMs?: number;
  /** How long a request or connection waits for an on-demand cluster. Default 5000. */
  odcdsTimeoutMs?: number;
}

/** Identity knobs of the node translator (plain data). */
export interface NodeIdentityOptions {
  trustDomain: string;
  /** SPIFFE ID template with `{td}`, `{ns}`, `{sa}`; default `spiffe://{td}/ns/{ns}/sa/{sa}`. */
  template?: string;
  /**
   * The SPIFFE IDs that hold an SVID now. Given, an identity without one serves nothing and
   * calls nothing: its pods get no inbound listeners (`:15008` or internal) and its caller
   * clusters refuse (no endpoints, no certificate; cluster.ts `refusingCluster`), so Envoy holds
   * no certificate of it and drains what used one. Unset: every identity has one (offline
   * translation, golden cases).
   */
  certified?: readonly string[];
}

function idOf(identity: NodeIdentityOptions, namespace: string, serviceAccount: string): string {
  return spiffeIdFor(
    identity.template ?? DEFAULT_ID_TEMPLATE,
    identity.trustDomain,
    namespace,
    serviceAccount,
  );
}

/** A caller's key with identity: `<namespace>/<serviceAccount>` of one of its pods. */
export function identityCallerKey(pod: { namespace: string; serviceAccount?: string }): string {
  return `${pod.namespace}/${pod.serviceAccount ?? "default"}`;
}

/** The callers of a node: per namespace, or with identity per (namespace, service account). */
export function nodeCallers(
  view: Pick<NodeView, "pods">,
  identity?: NodeIdentityOptions,
): Caller[] {
  const out = new Map<string, Caller>();
  for (const p of view.pods) {
    if (!identity) {
      out.set(p.namespace, { key: p.namespace, namespace: p.namespace });
      continue;
    }
    const key = identityCallerKey(p);
    const spiffeId = idOf(identity, p.namespace, p.serviceAccount ?? "default");
    out.set(key, { key, namespace: p.namespace, spiffeId });
  }
  return [...out.values()].sort((a, b) => a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
}

/** The route-table key of a pod's outbound listener. */
function callerKey(pod: NodeView["pods"][number], identity?: NodeIdentityOptions): string {
  return identity ? identityCallerKey(pod) : pod.namespace;
}

/** The caller namespaces of a node: its pods' namespaces, sorted, each once. */
export function nodeNamespaces(view: Pick<NodeView, "pods">): string[] {
  return [...new Set(view.pods.map((p) => p.namespace))].sort();
}

/** The services of `view.dependencies` that exist in the mesh, by authority order. */
export function dependencyServices(mesh: MeshIR, dependencies: readonly string[]): MeshService[] {
  const wanted = new Set(dependencies);
  return mesh.services.filter((s) => wanted.has(s.authority));
}

/**
 * Names of the clusters a node needs: every port of every dependency, plus every existing cluster
 * that the routes its namespaces see reach (backends and mirrors, TCPRoute backends).
 */
export function nodeClusterNames(
  services: readonly MeshService[],
  namespaces: readonly string[],
  clusters: ReadonlyMap<string, IRCluster>,
): Set<string> {
  const names = new Set<string>();
  for (const s of services) {
    for (const p of s.ports) {
      names.add(p.cluster);
      for (const ns of namespaces) {
        for (const cluster of callerBackendClusters(p, ns)) {
          if (clusters.has(cluster)) names.add(cluster);
        }
      }
    }
  }
  return names;
}

/** Per pod IP, what its inbound listeners take (see {@link nodeInboundPorts}). */
export interface NodeInboundPorts {
  /** The `podIP:15008` chains: every Service port the IP backs, with or without a mesh name. */
  ports: Map<string, InboundPort[]>;
  /** The internal listeners (this node's own mesh callers): mesh names only. */
  meshPorts: Map<string, InboundPort[]>;
}

/**
 * Pure: per pod IP, the Service ports its inbound listeners take, from the mesh's endpoints that
 * carry an identity. A pod gets inbound listeners only while its IP backs a port here, so the
 * node's listeners depend on endpoints too (agent/node re-translates a node when its pods' entry
 * changes). Ports that are not known HTTP also take raw TCP. `targets` defaults to the mesh's
 * capture targets (translateNode passes the ones it made).
 */
export function nodeInboundPorts(
  mesh: MeshIR,
  targets: readonly CaptureTarget[] = captureTargets(mesh),
): NodeInboundPorts {
  const tcp = new Set(targets.filter((t) => t.protocol !== "http").map((t) => t.port.cluster));
  const ports = inboundPorts([...mesh.clusters, ...mesh.namespacedClusters ?? []], tcp);
  const meshPorts = mesh.namespacedClusters ? inboundPorts(mesh.clusters, tcp) : ports;
  return { ports, meshPorts };
}

/**
 * Translates one node's view of the mesh into Envoy resources, each kind sorted by name. A
 * caller's `assignment` may give an unchanged cluster's ClusterLoadAssignment as the object it
 * made before (agent/node's memo by endpoints array), so encoding skips it.
 */
export function translateNode(
  mesh: MeshIR,
  view: NodeView,
  options: NodeTranslateOptions = {},
  assignment: (c: IRCluster) => NamedResource = loadAssignment,
): NodeResources {
  const statPrefix = options.statPrefix ?? "aether";
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const identity = options.identity;
  const listenerOpts = {
    statPrefix,
    address: options.egressAddress ?? "127.0.0.1",
    port: options.egressPort ?? 18081,
    ...identity ? { odcdsTimeoutMs: options.capture?.odcdsTimeoutMs ?? 5000 } : {},
  };
  const clustersByName = new Map(mesh.clusters.map((c) => [c.name, c]));
  const services = dependencyServices(mesh, view.dependencies);
  const namespaces = nodeNamespaces(view);
  const capture = options.capture;
  // UDP listeners send to their clusters directly (no on-demand CDS for datagrams): every
  // captured UDP port's caller clusters are warm.
  const udp = capture ? udpTargets(mesh) : [];
  const withUdp = (names: Set<string>, namespaces: readonly string[]) => {
    for (const c of udpCaptureClusters(udp, namespaces)) if (clustersByName.has(c)) names.add(c);
    return names;
  };
  const names = withUdp(nodeClusterNames(services, namespaces, clustersByName), namespaces);
  const irClusters = mesh.clusters.filter((c) => names.has(c.name));
  const certified = identity?.certified && new Set(identity.certified);
  const hasSvid = (id: string) => !certified || certified.has(id);
  const callers = nodeCallers(view, identity);
  const listeners = view.pods.map((p) => outboundListener(p, listenerOpts, callerKey(p, identity)));
  const clusters = identity
    ? callers.flatMap((caller) => {
      const scoped = view.callerDependencies?.[caller.key];
      const mine = withUdp(
        nodeClusterNames(
          scoped ? dependencyServices(mesh, scoped) : services,
          [caller.namespace],
          clustersByName,
        ),
        [caller.namespace],
      );
      return irClusters.filter((c) => mine.has(c.name)).map((c) => {
        const name = callerCluster(caller, c.name);
        if (!hasSvid(caller.spiffeId!)) return refusingCluster(name, connectTimeoutMs);
        const mtls = { callerId: caller.spiffeId!, trustDomain: identity.trustDomain };
        return cluster(c, { connectTimeoutMs, name, mtls });
      });
    })
    : irClusters.map((c) => cluster(c, { connectTimeoutMs }));
  const captured = capture ? captureTargets(mesh) : [];
  const routes = callers.map((c) => outboundRouteConfiguration(c.key));
  if (capture) {
    const byKey = new Map(callers.map((c) => [c.key, c]));
    const o = {
      statPrefix,
      port: capture.port,
      detectionTimeoutMs: capture.detectionTimeoutMs ?? 1000,
      odcdsTimeoutMs: capture.odcdsTimeoutMs ?? 5000,
      identity: identity !== undefined,
    };
    for (const p of view.pods) {
      const caller = byKey.get(callerKey(p, identity))!;
      listeners.push(captureListener(p, caller, captured, o));
      listeners.push(...captureUdpListeners(p, caller, udp, statPrefix));
    }
    const http = captured.filter((t) => t.protocol !== "tcp");
    routes.push(...callers.flatMap((c) => http.map((t) => captureRouteConfiguration(c, t.port))));
    clusters.push(passthroughCluster(connectTimeoutMs));
  }
  if (identity) {
    // The :15008 chains also accept the names of Services without a mesh name (only the edge
    // dials those, by namespace); internal listeners serve this node's mesh callers, so only
    // mesh names get one. Ports that are not known HTTP also take raw TCP — on a node without
    // capture too: callers on capturing nodes (of this cluster or, for an export, of others)
    // send it.
    const { ports, meshPorts } = nodeInboundPorts(mesh, capture ? captured : undefined);
    const targets = new Set<string>();
    for (const p of view.pods) {
      const mine = p.ip ? ports.get(p.ip) ?? [] : [];
      const id = idOf(identity, p.namespace, p.serviceAccount ?? "default");
      if (!hasSvid(id)) continue;
      const l = inboundListener(p, id, identity.trustDomain, mine, statPrefix);
      if (!l) continue;
      listeners.push(l);
      if (options.internalListeners) {
        const local = meshPorts.get(p.ip!) ?? [];
        listeners.push(...inboundInternalListeners(p, id, identity.trustDomain, local, statPrefix));
      }
      for (const port of mine) {
        const key = `${p.ip}:${port.targetPort}`;
        if (targets.has(key)) continue;
        targets.add(key);
        clusters.push(inboundCluster(p.ip!, port.targetPort, connectTimeoutMs));
      }
    }
  }
  return {
    listeners: sortedByName(listeners),
    routes: sortedByName(routes),
    virtualHosts: sortedByName(callers.flatMap((c) => outboundVirtualHosts(c, services))),
    clusters: sortedByName(clusters),
    endpoints: localizeEndpoints(
      sortedByName(irClusters).map(assignment),
      clustersByName,
      listeners,
    ),
    secrets: [],
  };
}
