/**
 * GAMMA attachment: route parentRefs naming a core Service. A route in the Service's namespace is
 * a producer route (every caller); a route in another namespace is a consumer route (callers in
 * the route's namespace only). `port` and `sectionName` (the port's name) narrow the attachment to
 * one Service port; without them it covers every port of the route's transport (UDPRoute: the UDP
 * ports; every other kind: the TCP ones). Hostnames are ignored (GEP-1294: GAMMA
 * implementations SHOULD NOT infer functionality from `hostnames`). A parentRef naming a
 * ServiceImport (multicluster.x-k8s.io, GEP-1748: routes for the clusterset service) attaches to
 * the import's clusterset VIP Service, the one the MCS controller makes: what a pod dials for the
 * `clusterset.local` name.
 * @module
 */
import { normalizedRef } from "../attachment.ts";
import { fail, type Outcome, pass } from "../status/mod.ts";
import type { ServiceImportSpec, ServicePort, ServiceSpec } from "../core_types.ts";
import { MCS_GROUP, vipServiceName } from "../../mcs/mod.ts";
import { keyOf, type Obj } from "../object_index.ts";
import type { Reads } from "../reads.ts";
import type { ParentReference } from "../types.ts";

/**
 * controllerName of the status entries aether writes for Service parents (GAMMA). The edge's
 * GatewayClass controllerName is `gateway.aether.io/edge`; the mesh has no GatewayClass, so its
 * entries carry this name.
 */
export const MESH_CONTROLLER_NAME = "gateway.aether.io/mesh";

/**
 * Whether a parentRef names a Service: group "" (core; "core" is accepted as an alias, as the
 * GAMMA docs write it) and kind Service.
 */
export const isServiceParent = (p: ParentReference): boolean =>
  (p.group === "" || p.group === "core") && p.kind === "Service";

/** Whether a parentRef names a ServiceImport (multicluster.x-k8s.io). */
export const isServiceImportParent = (p: ParentReference): boolean =>
  p.group === MCS_GROUP && p.kind === "ServiceImport";

/** Whether a parentRef is a mesh parent: a Service or a ServiceImport. */
export const isMeshParent = (p: ParentReference): boolean =>
  isServiceParent(p) || isServiceImportParent(p);

/** The outcome of one Service parentRef of a route. */
export interface MeshParentOutcome {
  /** Index of the parentRef in `spec.parentRefs` (status keeps that order). */
  readonly index: number;
  readonly parentRef: ParentReference;
  readonly accepted: Outcome;
  /** The parent Service when it exists and owns its mesh name. */
  readonly service?: Obj<ServiceSpec>;
  /** The Service ports the route applies to (empty unless accepted). */
  readonly ports: ServicePort[];
  /** The caller namespace of a consumer route; undefined for a producer route. */
  readonly consumer?: string;
}

/**
 * Where Service parents are looked up: Services and ServiceImports by `<ns>/<name>`, mesh-name
 * owners by name.
 */
export interface MeshServices {
  services: ReadonlyMap<string, Obj<ServiceSpec>>;
  imports?: ReadonlyMap<string, Obj<ServiceImportSpec>>;
  owners: ReadonlyMap<string, Obj<ServiceSpec>>;
  meshDomain: string;
}

const describe = (p: ParentReference, ns: string) =>
  `Service ${ns}/${p.name}${p.sectionName ? ` sectionName ${p.sectionName}` : ""}${
    p.port ? ` port ${p.port}` : ""
  }`;

/**
 * Attaches a route to its Service parents. Accepted=False reasons: NoMatchingParent when the
 * Service does not exist, has no mesh name (an older Service of the same name owns it), or has no
 * port matching `port`/`sectionName`. Every Service and owner lookup is recorded in `reads` (what
 * a remembered attachment is checked against).
 */
export function attachMeshRoute(
  index: MeshServices,
  route: Obj<{ parentRefs?: ParentReference[] }>,
  reads?: Reads,
  transport: "TCP" | "UDP" = "TCP",
): MeshParentOutcome[] {
  const out: MeshParentOutcome[] = [];
  const routeNs = route.metadata.namespace ?? "";
  (route.spec.parentRefs ?? []).forEach((parentRef, i) => {
    if (!isMeshParent(parentRef)) return;
    const ns = parentRef.namespace ?? routeNs;
    const base = { index: i, parentRef: normalizedRef(parentRef), ports: [] as ServicePort[] };
    let key = `${ns}/${parentRef.name}`;
    if (isServiceImportParent(parentRef)) {
      const si = index.imports?.get(key);
      reads?.import(key, si);
      if (!si) {
        out.push({
          ...base,
          accepted: fail("NoMatchingParent", `ServiceImport ${ns}/${parentRef.name} not found`),
        });
        return;
      }
      key = `${ns}/${vipServiceName(ns, parentRef.name)}`;
      if (!index.services.has(key)) {
        reads?.service(key, undefined);
        out.push({
          ...base,
          accepted: fail(
            "NoMatchingParent",
            `ServiceImport ${ns}/${parentRef.name} has no clusterset VIP Service ${key} yet ` +
              "(the MCS controller makes it for a ClusterSetIP import)",
          ),
        });
        return;
      }
    }
    const svc = index.services.get(key);
    reads?.service(key, svc);
    if (!svc) {
      out.push({
        ...base,
        accepted: fail("NoMatchingParent", `Service ${ns}/${parentRef.name} not found`),
      });
      return;
    }
    const owner = index.owners.get(svc.metadata.name);
    reads?.owner(svc.metadata.name, owner);
    if (owner !== svc) {
      out.push({
        ...base,
        accepted: fail(
          "NoMatchingParent",
          `Service ${keyOf(svc)} has no mesh name: ${svc.metadata.name}.${index.meshDomain} ` +
            `belongs to the older Service ${owner ? keyOf(owner) : "(none)"}`,
        ),
      });
      return;
    }
    const ports = (svc.spec?.ports ?? []).filter((p) =>
      (parentRef.port === undefined || p.port === parentRef.port) &&
      (parentRef.sectionName === undefined || p.name === parentRef.sectionName) &&
      (p.protocol ?? "TCP") === transport
    );
    const consumer = ns === routeNs ? undefined : routeNs;
    if (ports.length === 0) {
      out.push({
        ...base,
        service: svc,
        accepted: fail("NoMatchingParent", `${describe(parentRef, ns)}: no such ${transport} port`),
      });
      return;
    }
    out.push({
      ...base,
      service: svc,
      ports,
      ...(consumer !== undefined ? { consumer } : {}),
      accepted: pass(
        "Accepted",
        consumer === undefined
          ? "producer route accepted"
          : `consumer route accepted for callers in namespace ${consumer}`,
      ),
    });
  });
  return out;
}
