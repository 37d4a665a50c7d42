/**
 * backendRef resolution: Service (core) references → IRCluster names (`<svc>.<meshDomain>` for
 * the Service's first port, `<svc>.<meshDomain>:<port>` otherwise), ReferenceGrant checks, the
 * mesh-wide name owner, and the clusters with their ready endpoints from EndpointSlices.
 * @module
 */
import { fail, type Outcome } from "./status/mod.ts";
import {
  type EndpointSliceBody,
  SERVICE_NAME_LABEL,
  type ServiceImportSpec,
  type ServicePort,
  type ServiceSpec,
} from "./core_types.ts";
import { importClusterName } from "./imports.ts";
import { type ImportEndpointsMemo, memoizedImportEndpoints } from "./imports_memo.ts";
import { MCS_GROUP } from "../mcs/mod.ts";
import { vipImportPort, vipImportSni } from "./vip_imports.ts";
import {
  HTTP2_APP_PROTOCOLS,
  portNumbered,
  protocolProblem,
  readyEndpoints,
} from "./backend_ports.ts";
import { referenceAllowed } from "./refs.ts";
import { IdentityMemo, sameItems } from "../memo/mod.ts";
import { meshNameOwners, type OwnersMemo, portClusterName } from "./mesh/names.ts";
import { keyOf, type Obj, type ObjectIndex } from "./object_index.ts";
import type { Reads } from "./reads.ts";
import {
  type BackendObjectReference,
  GATEWAY_GROUP,
  type KubeObject,
  type Problem,
} from "./types.ts";
import type { IRCluster, IREndpoint } from "../ir/mod.ts";

/**
 * A cluster a valid reference needs: one port of a Service owning its mesh name, or one port of
 * a ServiceImport (its clusterset endpoints).
 */
export type ClusterUse =
  & {
    port: ServicePort;
    /** The referring kind's backends speak HTTP/2. */
    http2: boolean;
  }
  & ({ svc: Obj<ServiceSpec>; imported?: undefined } | { imported: Obj<ServiceImportSpec> });

/** A reference to a Service that has no mesh name: it and the older owner of that name. */
export type NameConflict = readonly [svc: Obj<ServiceSpec>, owner: Obj<ServiceSpec>];

/**
 * A resolved reference: the cluster name, and the failure when it is invalid; what the reference
 * needs of the resolve, as data: the cluster to make, or the mesh-name conflict to report.
 */
export interface ResolvedBackend {
  cluster: string;
  error?: Outcome;
  use?: ClusterUse;
  conflict?: NameConflict;
}

/**
 * Endpoints by Service port (a port object belongs to its Service object; the entry names the
 * Service, in case a caller shares one port object between Services), with the slices they were
 * read from.
 */
export type EndpointsMemo = IdentityMemo<
  ServicePort,
  { svc: Obj<ServiceSpec>; slices: readonly KubeObject[]; endpoints: IREndpoint[] }
>;

/** What a Backends remembers across resolves (owned by a ResolveState). */
export interface BackendsMemo {
  endpoints: EndpointsMemo;
  owners: OwnersMemo;
  /** ServiceImport ports' endpoints by their ClusterSetEndpoints object (made on first use). */
  imports?: ImportEndpointsMemo;
  /** Cluster names by Service port (the same strings every resolve: their hashes are kept). */
  clusterNames?: IdentityMemo<
    ServicePort,
    { svc: Obj<ServiceSpec>; domain: string; owns: boolean; name: string }
  >;
}

/**
 * Where a cluster's endpoints come from when a ClusterSetEndpoints object makes them: that
 * object's `<ns>/<name>`, the use (an import's own cluster, a clusterset VIP Service's) and the
 * import port (what the endpoints path of resolve, endpoints_edit.ts, makes them again from).
 */
export interface ImportSource {
  readonly key: string;
  readonly use: "import" | "vip";
  readonly port: ServicePort;
}

/** Whether a cluster of `port` speaks HTTP/2: asked for (`http2`) or by appProtocol (h2c, grpc). */
const speaksH2 = (port: ServicePort, http2: boolean) =>
  http2 || HTTP2_APP_PROTOCOLS.has(port.appProtocol ?? "");

/** Resolves backendRefs for one resolve and collects the clusters they use. */
export class Backends {
  #clusters = new Map<string, IRCluster>();
  /** The clusters made of ClusterSetEndpoints objects, by name. */
  #importSources = new Map<string, ImportSource>();
  #memo: BackendsMemo;
  #owners: ReadonlyMap<string, Obj<ServiceSpec>>;
  #reported = new Set<string>();
  /** Where resolve() records its lookups while a conversion runs ({@link Backends.reading}). */
  #reads: Reads | undefined;
  /** EndpointSlices (in index order) by the `<ns>/<name>` of the Service they label. */
  #slices = new Map<string, (KubeObject & EndpointSliceBody)[]>();

  constructor(
    private indexed: ObjectIndex,
    private meshDomain: string,
    private problems: Problem[],
    memo: BackendsMemo = { endpoints: new IdentityMemo(), owners: {} },
  ) {
    this.#memo = memo;
    this.#owners = meshNameOwners(indexed.services.values(), memo.owners);
    for (let i = 0; i < indexed.slices.length; i++) {
      const slice = indexed.slices[i];
      const service = slice.metadata.labels?.[SERVICE_NAME_LABEL];
      if (service === undefined) continue;
      const key = `${slice.metadata.namespace}/${service}`;
      const list = this.#slices.get(key);
      if (list) list.push(slice);
      else this.#slices.set(key, [slice]);
    }
  }

  /**
   * `f()` with every lookup its {@link Backends.resolve} calls make recorded in `reads` (what a
   * memoized conversion is checked against later; conversions read the objects only through
   * resolve).
   */
  reading<T>(reads: Reads, f: () => T): T {
    const outer = this.#reads;
    this.#reads = reads;
    try {
      return f();
    } finally {
      this.#reads = outer;
    }
  }

  /**
   * Resolves `ref` from a route of `routeKind` in `routeNs`. `grpc` marks the cluster http2.
   * Pure: the cluster to make or the conflict to report is returned ({@link Backends.apply}).
   * Failure reasons: InvalidKind, RefNotPermitted, BackendNotFound, UnsupportedProtocol. With
   * `options.mesh` (a route on a Service parent) a cross-namespace reference needs no
   * ReferenceGrant (GEP-1294: mesh routes only augment Services every caller can reach anyway).
   * With `options.transport` (an L4 route) the port must have that protocol, any appProtocol.
   */
  resolve(
    ref: BackendObjectReference,
    routeKind: string,
    routeNs: string,
    grpc: boolean,
    options: { mesh?: boolean; transport?: "TCP" | "UDP" } = {},
  ): ResolvedBackend {
    const ns = ref.namespace ?? routeNs;
    const bad = (reason: string, message: string) => ({
      cluster: `aether.invalid/${ns}/${ref.name}/${ref.port ?? 0}`,
      error: fail(reason, message),
    });
    const group = ref.group ?? "", kind = ref.kind ?? "Service";
    const imported = group === MCS_GROUP && kind === "ServiceImport";
    if (!imported && (group !== "" || kind !== "Service")) {
      return bad(
        "InvalidKind",
        `backendRef ${
          group ? `${group}/` : ""
        }${kind} ${ns}/${ref.name}: only core Services and ServiceImports (${MCS_GROUP}) are supported`,
      );
    }
    const reads = this.#reads;
    if (reads && !options.mesh && ns !== routeNs) reads.grants = true;
    const allowed = options.mesh || ns === routeNs || referenceAllowed(
      this.indexed,
      { group: GATEWAY_GROUP, kind: routeKind, namespace: routeNs },
      { group, kind, namespace: ns, name: ref.name },
    );
    if (!allowed) {
      return bad(
        "RefNotPermitted",
        `no ReferenceGrant in ${ns} allows ${routeKind}s from ${routeNs} to use ${kind} ${ns}/${ref.name}`,
      );
    }
    const key = `${ns}/${ref.name}`;
    if (imported) {
      const si = this.indexed.serviceImports.get(key);
      reads?.import(key, si);
      if (!si) {
        return bad("BackendNotFound", `ServiceImport ${ns}/${ref.name} not found`);
      }
      const port = portNumbered(si.spec?.ports, ref.port);
      if (!port) {
        return bad("BackendNotFound", `ServiceImport ${ns}/${ref.name} has no port ${ref.port}`);
      }
      const wrong = protocolProblem(`ServiceImport ${ns}/${ref.name}`, port, options.transport);
      if (wrong) return bad("UnsupportedProtocol", wrong);
      return {
        cluster: importClusterName(ns, ref.name, port.port),
        use: { imported: si, port, http2: grpc },
      };
    }
    const svc = this.indexed.services.get(key);
    reads?.service(key, svc);
    if (!svc) return bad("BackendNotFound", `Service ${ns}/${ref.name} not found`);
    const owner = this.#owners.get(svc.metadata.name)!;
    reads?.owner(svc.metadata.name, owner);
    if (owner !== svc && options.mesh) {
      return {
        ...bad(
          "BackendNotFound",
          `Service ${
            keyOf(svc)
          } has no mesh name: ${ref.name}.${this.meshDomain} belongs to the older Service ${
            keyOf(owner)
          }`,
        ),
        conflict: [svc, owner],
      };
    }
    const port = portNumbered(svc.spec?.ports, ref.port);
    if (!port) {
      return bad("BackendNotFound", `Service ${ns}/${ref.name} has no port ${ref.port}`);
    }
    const wrong = protocolProblem(`Service ${ns}/${ref.name}`, port, options.transport);
    if (wrong) return bad("UnsupportedProtocol", wrong);
    const resolved: ResolvedBackend = {
      cluster: this.#clusterName(svc, port),
      use: { svc, port, http2: grpc },
    };
    // The edge serves it under a namespaced cluster name; the Service's missing mesh name is
    // still reported on the Service.
    if (owner !== svc) resolved.conflict = [svc, owner];
    return resolved;
  }

  /** Makes the clusters and reports the conflicts a converted route's references need. */
  apply(needs: { clusters: readonly ClusterUse[]; conflicts: readonly NameConflict[] }) {
    for (const u of needs.clusters) {
      if (u.imported) this.importCluster(u.imported, u.port, u.http2);
      else this.serviceCluster(u.svc, u.port, u.http2);
    }
    for (const [svc, owner] of needs.conflicts) this.#reportConflict(svc, owner);
  }

  /**
   * Whether every cluster `needs` uses was made by this resolve already, as it stays (no http2
   * upgrade): then applying it would change nothing (the add path, add_edit.ts).
   */
  holds(needs: { clusters: readonly ClusterUse[] }): boolean {
    return needs.clusters.every((u) => {
      const name = u.imported
        ? importClusterName(u.imported.metadata.namespace, u.imported.metadata.name, u.port.port)
        : this.#clusterName(u.svc, u.port);
      const made = this.#clusters.get(name);
      return made !== undefined && (made.protocol === "http2" || !speaksH2(u.port, u.http2));
    });
  }

  /** Owner Service of each mesh name (by Service name). */
  get owners(): ReadonlyMap<string, Obj<ServiceSpec>> {
    return this.#owners;
  }

  /**
   * The cluster of `port` of `svc` (a Service owning its mesh name), made once per resolve and
   * shared by the edge and the mesh; http2 when `http2` or the port's appProtocol is h2c/grpc.
   */
  serviceCluster(svc: Obj<ServiceSpec>, port: ServicePort, http2: boolean): IRCluster {
    const name = this.#clusterName(svc, port);
    return this.#known(name, port, http2) ?? this.#cluster(
      name,
      svc,
      port,
      http2,
      this.#vipImportEndpoints(name, svc, port) ?? this.#endpoints(svc, port),
      vipImportSni(this.indexed, svc, port),
    );
  }

  /**
   * The cluster of `port` of a ServiceImport: the clusterset registry's endpoints of that port
   * (this cluster's first), made once per resolve; http2 as for a Service port.
   */
  importCluster(si: Obj<ServiceImportSpec>, port: ServicePort, http2: boolean): IRCluster {
    const name = importClusterName(si.metadata.namespace, si.metadata.name, port.port);
    const known = this.#known(name, port, http2);
    if (known) return known;
    const key = this.indexed.keyOf(si);
    this.#importSources.set(name, { key, use: "import", port });
    const endpoints = memoizedImportEndpoints(
      this.#memo.imports ??= new IdentityMemo(),
      "import",
      this.indexed.clusterSetEndpoints.get(key)?.spec,
      port,
    );
    return this.#cluster(name, si, port, http2, endpoints);
  }

  /** The clusters made so far whose endpoints come from a ClusterSetEndpoints object, by name. */
  importSources(): ReadonlyMap<string, ImportSource> {
    return this.#importSources;
  }

  /** The cluster `name` when this resolve made it already (an http2 use upgrades it). */
  #known(name: string, port: ServicePort, http2: boolean): IRCluster | undefined {
    const existing = this.#clusters.get(name);
    if (existing && speaksH2(port, http2)) existing.protocol = "http2";
    return existing;
  }

  /** Makes the cluster `name` of `port` of `of` (once per resolve: see {@link Backends.#known}). */
  #cluster(
    name: string,
    of: Obj,
    port: ServicePort,
    http2: boolean,
    endpoints: IREndpoint[],
    sni?: string,
  ): IRCluster {
    const cluster: IRCluster = {
      name,
      service: this.indexed.keyOf(of),
      port: port.port,
      protocol: speaksH2(port, http2) ? "http2" : "http1",
      endpoints,
    };
    if (port.protocol === "UDP") cluster.udp = true;
    if (sni) cluster.sni = sni;
    this.#clusters.set(name, cluster);
    return cluster;
  }

  /** The clusters of every valid reference resolved so far, sorted by name. */
  clusters(): IRCluster[] {
    return [...this.#clusters.values()].sort((
      a,
      b,
    ) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }

  #clusterName(svc: Obj<ServiceSpec>, port: ServicePort): string {
    const names = this.#memo.clusterNames ??= new IdentityMemo();
    const domain = this.meshDomain;
    const owns = this.#owners.get(svc.metadata.name) === svc;
    const seen = names.peek(port);
    if (seen?.svc === svc && seen.domain === domain && seen.owns === owns) return seen.name;
    const name = portClusterName(svc, port, domain, owns);
    names.set(port, { svc, domain, owns, name });
    return name;
  }

  #reportConflict(svc: Obj<ServiceSpec>, owner: Obj<ServiceSpec>) {
    if (this.#reported.has(this.indexed.keyOf(svc))) return;
    this.#reported.add(this.indexed.keyOf(svc));
    this.problems.push({
      kind: "Service",
      namespace: svc.metadata.namespace,
      name: svc.metadata.name,
      field: "metadata.name",
      message:
        `mesh name ${svc.metadata.name}.${this.meshDomain} is already owned by the older Service ${
          keyOf(owner)
        }; mesh routes to ${keyOf(svc)} are invalid (Gateway routes reach it by namespace)`,
    });
  }

  /**
   * The endpoints of a clusterset VIP Service's `port`: its ServiceImport's clusterset endpoints
   * of that port (see {@link vipImportPort}), recorded as the cluster's import source; undefined
   * for any other Service, or while the import is not there.
   */
  #vipImportEndpoints(
    cluster: string,
    svc: Obj<ServiceSpec>,
    port: ServicePort,
  ): IREndpoint[] | undefined {
    const found = vipImportPort(this.indexed, svc, port);
    if (!found) return undefined;
    const { key, port: importPort } = found;
    this.#importSources.set(cluster, { key, use: "vip", port: importPort });
    const spec = this.indexed.clusterSetEndpoints.get(key)?.spec;
    return memoizedImportEndpoints(
      this.#memo.imports ??= new IdentityMemo(),
      "vip",
      spec,
      importPort,
    );
  }

  /** The ready endpoints of `port` of `svc`, remembered while its EndpointSlices are unchanged. */
  #endpoints(svc: Obj<ServiceSpec>, port: ServicePort): IREndpoint[] {
    const slices = this.#slices.get(this.indexed.keyOf(svc)) ?? [];
    const seen = this.#memo.endpoints.peek(port);
    const hit = seen !== undefined && seen.svc === svc && sameItems(seen.slices, slices);
    this.#memo.endpoints.count(hit);
    if (hit) return seen.endpoints;
    const endpoints = readyEndpoints(slices, port);
    this.#memo.endpoints.set(port, { svc, slices, endpoints });
    return endpoints;
  }
}
