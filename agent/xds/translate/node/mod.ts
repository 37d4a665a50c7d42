/**
 * translate/node: one node proxy's slice of the mesh (MeshIR + NodeView) → Envoy resources. Pure
 * and deterministic, like the edge translator, whose route, cluster and endpoint code it reuses.
 *
 * Names an integrator relies on:
 * - Listener `outbound|<namespace>/<pod>`: `127.0.0.1:18081` inside the pod's netns;
 * - RouteConfiguration `outbound.<namespace>`: one per caller namespace among the node's pods;
 *   virtual host `<cluster>` per service port (domains from the IR), then `cold` (`*`);
 * - Cluster and ClusterLoadAssignment: the IR cluster name, `<authority>` or `<authority>:<port>`.
 *
 * Caller namespace: one listener per pod, bound in the pod's netns, rather than one shared
 * listener guessing the caller from the source address (every pod dials 127.0.0.1, so addresses
 * say nothing). The listener is the caller: its HCM names the namespace's route table, and the
 * same listener is where the pod's identity will pick its outbound SVID (mTLS, later). Route
 * tables are per namespace, not per pod, so pods of one namespace share one RDS resource.
 *
 * Cold services: the catch-all virtual host routes by `cluster_header: ":authority"` with the
 * on-demand filter's per-route ODCDS config (ADS source; Envoy supports ODCDS on delta xDS only).
 * Envoy subscribes to the missing cluster by name on its CDS stream; the xDS server's `onDemand`
 * hook grows the node's set, and a name that still does not exist is answered in
 * `removed_resources` (503 at once, not after the timeout).
 * @module
 */
import type { MeshIR, MeshService, NodeView } from "../../../../lib/ir/mesh.ts";
import type { IRCluster } from "../../../../lib/ir/types.ts";
import { cluster } from "../cluster.ts";
import { translateEndpoints } from "../endpoint.ts";
import type { EnvoyResources, NamedResource } from "../types.ts";
import { sortedByName } from "../util.ts";
import { outboundListener } from "./listener.ts";
import { callerRoutes, outboundRouteConfiguration } from "./routes.ts";

export { outboundListenerName, outboundRouteName } from "./listener.ts";
export { callerRoutes, COLD_VHOST, defaultRoute } from "./routes.ts";

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
  /** How long a request to a cold service waits for on-demand CDS. Default 5000 ms. */
  odcdsTimeoutMs?: number;
  /**
   * Cluster names Envoy asked for on demand. One that spells a service's first port explicitly
   * (`<authority>:<firstPort>`, a Host the catch-all turns into that name) gets an alias cluster
   * of that name sharing the first port's endpoints (EDS `service_name`), so the first request
   * with such a Host is served too.
   */
  requestedClusters?: readonly string[];
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
 * that the routes its namespaces see reach (backends and mirrors).
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
        for (const r of callerRoutes(p, ns)) {
          if (r.action.kind !== "forward") continue;
          for (const c of [...r.action.backends, ...r.action.mirrors]) {
            if (clusters.has(c.cluster)) names.add(c.cluster);
          }
        }
      }
    }
  }
  return names;
}

/** Alias clusters for requested `<authority>:<firstPort>` names of dependency services. */
function aliasClusters(
  services: readonly MeshService[],
  requested: readonly string[],
  connectTimeoutMs: number,
  clusters: ReadonlyMap<string, IRCluster>,
): NamedResource[] {
  const wanted = new Set(requested);
  return services.flatMap((s) => {
    const first = s.ports[0];
    const alias = first ? `${s.authority}:${first.port}` : "";
    const target = first && clusters.get(first.cluster);
    if (!target || alias === first.cluster || !wanted.has(alias)) return [];
    const { resource } = cluster({ ...target, name: alias }, { connectTimeoutMs });
    const eds = resource.eds_cluster_config as Record<string, unknown>;
    resource.eds_cluster_config = { ...eds, service_name: target.name };
    return [{ name: alias, resource }];
  });
}

/** Translates one node's view of the mesh into Envoy resources, each kind sorted by name. */
export function translateNode(
  mesh: MeshIR,
  view: NodeView,
  options: NodeTranslateOptions = {},
): EnvoyResources {
  const statPrefix = options.statPrefix ?? "aether";
  const connectTimeoutMs = options.connectTimeoutMs ?? 5000;
  const listenerOpts = {
    statPrefix,
    address: options.egressAddress ?? "127.0.0.1",
    port: options.egressPort ?? 18081,
  };
  const routeOpts = { odcdsTimeoutMs: options.odcdsTimeoutMs ?? 5000 };
  const clustersByName = new Map(mesh.clusters.map((c) => [c.name, c]));
  const services = dependencyServices(mesh, view.dependencies);
  const namespaces = nodeNamespaces(view);
  const names = nodeClusterNames(services, namespaces, clustersByName);
  const irClusters = mesh.clusters.filter((c) => names.has(c.name));
  const aliases = aliasClusters(
    services,
    options.requestedClusters ?? [],
    connectTimeoutMs,
    clustersByName,
  );
  return {
    listeners: sortedByName(view.pods.map((p) => outboundListener(p, listenerOpts))),
    routes: sortedByName(
      namespaces.map((ns) => outboundRouteConfiguration(ns, services, routeOpts)),
    ),
    clusters: sortedByName([
      ...irClusters.map((c) => cluster(c, { connectTimeoutMs })),
      ...aliases,
    ]),
    endpoints: translateEndpoints(irClusters),
    secrets: [],
  };
}
