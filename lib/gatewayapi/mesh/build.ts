/**
 * The east-west IR: every Service that owns its mesh name becomes a MeshService with one
 * MeshServicePort per Service port (a Service without one only lends its port clusters to
 * `namespacedClusters`, for the edge's mTLS to its pods); routes accepted on a Service parent are
 * grouped per port into producer routes and consumer routes per caller namespace, each group
 * merged by Gateway API precedence (the edge's ordering: most specific match, oldest route on a
 * tie, then namespace/name). A redirect's default port is the Service port the request was
 * addressed to. TCPRoutes and TLSRoutes on a TCP port, UDPRoutes on a UDP port, give its
 * producer and per-namespace consumer L4 routing (a weighted UDPRoute with a merged cluster).
 * @module
 */
import type { ServiceImportSpec, ServicePort, ServiceSpec } from "../core_types.ts";
import type { RouteKind } from "../routes/kind.ts";
import type { MeshParentOutcome, MeshServices } from "./attachment.ts";
import { IdentityMemo, sameItems } from "../../memo/mod.ts";
import { meshAuthority } from "./names.ts";
import { pushEntries, type RankedEntry, renderRoutes } from "../routes/render.ts";
import type { ConvertedRoute } from "../routes/kind.ts";
import { keyOf, type Obj } from "../object_index.ts";
import type { KubeObject } from "../types.ts";
import type { IRBackend, IRCluster, IRRoute, MeshTlsRoute } from "../../ir/mod.ts";
import { mergedUdpClusterOf, type MeshUdpRoute, portUdpRoutes } from "../../ir/mod.ts";
import { mergedUdpCluster, udpClusterName } from "../l4/udp_clusters.ts";
import type { MeshIR, MeshService, MeshServicePort } from "../../ir/mod.ts";

/** A route with Service parents, converted for the mesh. */
export interface MeshRouteState {
  kind: RouteKind;
  /** The kind's backends speak HTTP/2 (the registry's http2Backends). */
  http2: boolean;
  route: KubeObject;
  /** Converted with mesh semantics (cross-namespace backendRefs need no ReferenceGrant). */
  converted: ConvertedRoute;
  parents: readonly MeshParentOutcome[];
}

/**
 * Makes (once) the cluster of one port of a Service that owns its mesh name, or of one port of a
 * ServiceImport (its clusterset endpoints).
 */
export interface MeshClusterSource {
  serviceCluster(svc: Obj<ServiceSpec>, port: ServicePort, http2: boolean): IRCluster;
  importCluster(si: Obj<ServiceImportSpec>, port: ServicePort, http2: boolean): IRCluster;
}

/** Routes of one Service port: producer ones under "", consumer ones under their namespace. */
type PortRoutes = Map<string, Map<string, MeshRouteState>>;

const byString = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** What a MeshServicePort carries of the Service port besides its number (set fields only). */
function portFacts(port: ServicePort): Pick<MeshServicePort, "appProtocol" | "protocol"> {
  const out: Pick<MeshServicePort, "appProtocol" | "protocol"> = {};
  if (port.appProtocol) out.appProtocol = port.appProtocol;
  if (port.protocol && port.protocol !== "TCP") out.protocol = port.protocol;
  return out;
}

/**
 * The HTTP names of a Service port: `<authority>:<port>`, and the bare authority for the first
 * port; none for a UDP or SCTP port (it carries no HTTP, and may share its number with a TCP one).
 */
function portDomains(port: ServicePort, first: boolean, authority: string): string[] {
  if (port.protocol && port.protocol !== "TCP") return [];
  return first ? [authority, `${authority}:${port.port}`] : [`${authority}:${port.port}`];
}

/**
 * The backends of the group's oldest TCPRoute (routes enter a group kind by kind, each kind's in
 * age order), undefined without one. A newer TCPRoute on the same port and caller is refused
 * (mesh/l4_conflicts.ts).
 */
function tcpBackends(group: Map<string, MeshRouteState> | undefined): IRBackend[] | undefined {
  for (const state of group?.values() ?? []) {
    if (state.kind === "TCPRoute" && state.converted.l4Backends) return state.converted.l4Backends;
  }
  return undefined;
}

/** The group's TLSRoutes, oldest first; undefined without one. */
function tlsRoutes(group: Map<string, MeshRouteState> | undefined): MeshTlsRoute[] | undefined {
  const out: MeshTlsRoute[] = [];
  for (const state of group?.values() ?? []) {
    if (state.kind !== "TLSRoute" || !state.converted.l4Backends) continue;
    const spec = state.route.spec as { hostnames?: string[] } | undefined;
    out.push({
      name: keyOf(state.route),
      hostnames: [...(spec?.hostnames ?? [])],
      backends: state.converted.l4Backends,
    });
  }
  return out.length > 0 ? out : undefined;
}

/**
 * The group's oldest UDPRoute (a newer one on the same port and caller is refused), its cluster
 * named for the port and role when several backends need a merged one; undefined without one.
 */
function udpRoute(
  group: Map<string, MeshRouteState> | undefined,
  portCluster: string,
  role: string,
): MeshUdpRoute | undefined {
  for (const state of group?.values() ?? []) {
    if (state.kind !== "UDPRoute" || !state.converted.l4Backends) continue;
    const backends = state.converted.l4Backends;
    const carrying = backends.filter((b) => b.weight > 0);
    const cluster = carrying.length > 1
      ? udpClusterName(`${portCluster}#${role || "producer"}`)
      : carrying[0]?.cluster;
    return { name: keyOf(state.route), backends, ...(cluster ? { cluster } : {}) };
  }
  return undefined;
}

function render(group: Map<string, MeshRouteState> | undefined, port: number): IRRoute[] {
  if (!group) return [];
  const entries: RankedEntry[] = [];
  for (const state of group.values()) pushEntries(entries, state.route, state.converted, "");
  return renderRoutes(entries, { port, protocol: "HTTP" });
}

/** What buildMesh remembers across resolves (owned by a ResolveState). */
export class MeshMemo {
  /** Owners with their authority, by authority; per (read-only) owners Map. */
  readonly sortedOwners = new IdentityMemo<
    ReadonlyMap<string, Obj<ServiceSpec>>,
    { meshDomain: string; list: { svc: Obj<ServiceSpec>; authority: string }[] }
  >();
  /** MeshServices without routes by (admitted, read-only) Service: shared between resolves. */
  readonly routeless = new IdentityMemo<
    Obj<ServiceSpec>,
    { meshDomain: string; service: MeshService }
  >();
  /**
   * Rendered ports by (read-only) Service port, with what they were made of: whether it is the
   * Service's first port, authority, cluster name, then per route group its caller namespace and each route with its conversion, all
   * compared by identity. A port whose routes did not change is not rendered again.
   */
  readonly ports = new IdentityMemo<ServicePort, { inputs: unknown[]; port: MeshServicePort }>();
  /** MeshServices with routes by Service, valid while authority and rendered ports are the same. */
  readonly services = new IdentityMemo<
    Obj<ServiceSpec>,
    { inputs: unknown[]; service: MeshService }
  >();
}

/** The identities a port's rendering is made of (see {@link MeshMemo.ports}). */
function portInputs(
  first: boolean,
  authority: string,
  cluster: string,
  groups: PortRoutes | undefined,
): unknown[] {
  const inputs: unknown[] = [first, authority, cluster];
  for (const [role, group] of groups ?? []) {
    inputs.push(role);
    for (const state of group.values()) inputs.push(state.route, state.converted);
  }
  return inputs;
}

/** One port of a Service with routes: producer routes and consumer routes per caller namespace. */
function renderPort(
  port: ServicePort,
  first: boolean,
  authority: string,
  cluster: string,
  groups: PortRoutes | undefined,
  memo: MeshMemo,
): MeshServicePort {
  const inputs = portInputs(first, authority, cluster, groups);
  return memo.ports.get(port, () => {
    const consumerRoutes: Record<string, IRRoute[]> = {};
    const consumerTcp: Record<string, IRBackend[]> = {};
    const consumerTls: Record<string, MeshTlsRoute[]> = {};
    const consumerUdp: Record<string, MeshUdpRoute> = {};
    for (const ns of [...(groups?.keys() ?? [])].filter((k) => k !== "").sort(byString)) {
      const tcp = tcpBackends(groups!.get(ns));
      if (tcp) consumerTcp[ns] = tcp;
      const tls = tlsRoutes(groups!.get(ns));
      if (tls) consumerTls[ns] = tls;
      const udp = udpRoute(groups!.get(ns), cluster, ns);
      if (udp) consumerUdp[ns] = udp;
      const http = render(groups!.get(ns), port.port);
      if (http.length > 0 || (!tcp && !tls && !udp)) consumerRoutes[ns] = http;
    }
    const producerTcp = tcpBackends(groups?.get(""));
    const producerTls = tlsRoutes(groups?.get(""));
    const producerUdp = udpRoute(groups?.get(""), cluster, "");
    return {
      inputs,
      port: {
        port: port.port,
        ...portFacts(port),
        cluster,
        domains: portDomains(port, first, authority),
        producerRoutes: render(groups?.get(""), port.port),
        consumerRoutes,
        ...(producerTcp ? { producerTcp } : {}),
        ...(Object.keys(consumerTcp).length > 0 ? { consumerTcp } : {}),
        ...(producerTls ? { producerTls } : {}),
        ...(Object.keys(consumerTls).length > 0 ? { consumerTls } : {}),
        ...(producerUdp ? { producerUdp } : {}),
        ...(Object.keys(consumerUdp).length > 0 ? { consumerUdp } : {}),
      },
    };
  }, (seen) => seen.port.port === port.port && sameItems(seen.inputs, inputs)).port;
}

function ownersByAuthority(
  index: MeshServices,
  memo: MeshMemo,
): { svc: Obj<ServiceSpec>; authority: string }[] {
  return memo.sortedOwners.get(index.owners, () => ({
    meshDomain: index.meshDomain,
    list: [...index.owners.values()]
      .map((svc) => ({ svc, authority: meshAuthority(svc.metadata.name, index.meshDomain) }))
      .sort((a, b) => byString(a.authority, b.authority)),
  }), (seen) => seen.meshDomain === index.meshDomain).list;
}

/** The MeshService of `svc` when no route is on any of its ports (`clusters`: its port's). */
function routeless(
  svc: Obj<ServiceSpec>,
  authority: string,
  meshDomain: string,
  clusters: IRCluster[],
  memo: MeshMemo,
): MeshService {
  // Cluster names follow from the Service, its ports and the mesh domain (portClusterName).
  const seen = memo.routeless.peek(svc);
  memo.routeless.count(seen?.meshDomain === meshDomain);
  if (seen?.meshDomain === meshDomain) return seen.service;
  const service: MeshService = {
    authority,
    namespace: svc.metadata.namespace,
    name: svc.metadata.name,
    vips: serviceVips(svc.spec),
    ports: (svc.spec?.ports ?? []).map((port, i): MeshServicePort => ({
      port: port.port,
      ...portFacts(port),
      cluster: clusters[i].name,
      domains: portDomains(port, i === 0, authority),
      producerRoutes: [],
      consumerRoutes: {},
    })),
  };
  memo.routeless.set(svc, { meshDomain, service });
  return service;
}

/** Builds the MeshIR from the Services and the routes accepted on Service parents. */
export function buildMesh(
  index: MeshServices,
  clusters: MeshClusterSource,
  routes: MeshRouteState[],
  memo: MeshMemo = new MeshMemo(),
): MeshIR {
  const byPort = new Map<ServicePort, PortRoutes>();
  const grpcPorts = new Set<ServicePort>();
  for (const state of routes) {
    const id = `${state.kind}/${keyOf(state.route)}`;
    for (const parent of state.parents) {
      if (!parent.accepted.ok) continue;
      for (const port of parent.ports) {
        let groups = byPort.get(port);
        if (!groups) byPort.set(port, groups = new Map());
        const role = parent.consumer ?? "";
        let group = groups.get(role);
        if (!group) groups.set(role, group = new Map());
        group.set(id, state);
        if (state.http2) grpcPorts.add(port);
      }
    }
  }
  const services: MeshService[] = [];
  const all: IRCluster[] = [];
  for (const { svc, authority } of ownersByAuthority(index, memo)) {
    const svcPorts = svc.spec?.ports ?? [];
    if (svcPorts.every((port) => !byPort.has(port))) {
      // No routes on any port: the Service renders as before; its clusters are still made.
      for (const port of svcPorts) all.push(clusters.serviceCluster(svc, port, false));
      services.push(
        routeless(svc, authority, index.meshDomain, all.slice(-svcPorts.length), memo),
      );
      continue;
    }
    const ports = svcPorts.map((port, i): MeshServicePort => {
      const cluster = clusters.serviceCluster(svc, port, grpcPorts.has(port));
      all.push(cluster);
      return renderPort(port, i === 0, authority, cluster.name, byPort.get(port), memo);
    });
    const inputs = [authority, ...ports];
    services.push(
      memo.services.get(svc, () => ({
        inputs,
        service: {
          authority,
          namespace: svc.metadata.namespace,
          name: svc.metadata.name,
          vips: serviceVips(svc.spec),
          ports,
        },
      }), (seen) => sameItems(seen.inputs, inputs)).service,
    );
  }
  all.push(...udpClusters(services, all), ...importClusters(routes, clusters));
  all.sort((a, b) => byString(a.name, b.name));
  const namespaced = namespacedClusters(index, clusters);
  return namespaced.length > 0
    ? { services, clusters: all, namespacedClusters: namespaced }
    : { services, clusters: all };
}

/**
 * The ServiceImport clusters the accepted mesh routes send to (a ServiceImport is no mesh
 * Service: its clusters exist only for the routes that use them), each once.
 */
function importClusters(routes: readonly MeshRouteState[], clusters: MeshClusterSource) {
  const out = new Map<string, IRCluster>();
  for (const state of routes) {
    if (!state.parents.some((p) => p.accepted.ok)) continue;
    for (const use of state.converted.clusters) {
      if (!use.imported) continue;
      const c = clusters.importCluster(use.imported, use.port, use.http2);
      out.set(c.name, c);
    }
  }
  return [...out.values()];
}

/**
 * The merged clusters of the UDPRoutes with several carrying backends (UDPRoute backends are mesh
 * Services, so their clusters are among `clusters`), made afresh: their endpoints follow the
 * backends'.
 */
function udpClusters(services: readonly MeshService[], clusters: readonly IRCluster[]) {
  const out: IRCluster[] = [];
  let byName: Map<string, IRCluster> | undefined;
  for (const s of services) {
    for (const p of s.ports) {
      for (const r of portUdpRoutes(p)) {
        const name = mergedUdpClusterOf(r);
        if (!name) continue;
        byName ??= new Map(clusters.map((c) => [c.name, c]));
        const merged = mergedUdpCluster(name, r.name, p.port, r.backends, byName);
        if (merged) out.push(merged);
      }
    }
  }
  return out;
}

/**
 * The port clusters of every Service without a mesh name (an older same-named Service owns it),
 * sorted by name: no mesh service is made of them, but a Gateway route's namespaced backendRef
 * reaches them, so node proxies accept the edge's mTLS to their pods (MeshIR.namespacedClusters).
 */
function namespacedClusters(index: MeshServices, clusters: MeshClusterSource): IRCluster[] {
  const out: IRCluster[] = [];
  for (const svc of index.services.values()) {
    if (index.owners.get(svc.metadata.name) === svc) continue;
    for (const port of svc.spec?.ports ?? []) out.push(clusters.serviceCluster(svc, port, false));
  }
  return out.sort((a, b) => byString(a.name, b.name));
}

/** The Service's cluster IPs: `clusterIPs` when set, else `clusterIP`; never "None". */
export function serviceVips(spec: ServiceSpec | undefined): string[] {
  const ips = spec?.clusterIPs?.length ? spec.clusterIPs : spec?.clusterIP ? [spec.clusterIP] : [];
  return ips.filter((ip) => ip !== "" && ip !== "None");
}
