/**
 * What the MCS controller of one cluster wants (pure): the exports it publishes in its registry
 * origin, the ServiceImports (and their clusterset VIP Services) it keeps in its own cluster, and
 * the status of its ServiceExports — from its ServiceExports, Services and Namespaces and every
 * origin's exports in the registry.
 * @module
 */
import {
  endpointRecords,
  type EndpointSliceShape,
  type ExportRecord,
  exportRecord,
  isInvalidExport,
  type MergedService,
  mergeExports,
  type PodIdentity,
  type ServiceExportShape,
  type ServiceShape,
} from "../../lib/mcs/mod.ts";
import { exportKey } from "../../lib/registry/mod.ts";

/** A condition as the MCS API writes it (metav1.Condition without the transition time). */
export interface McsCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
}

/** The label on every object the MCS controller makes (it deletes only those). */
export const MANAGED_BY = { "app.kubernetes.io/managed-by": "aether-mcs" };
/** kube-proxy ignores a Service with this label (KEP-2447): the clusterset VIP is aether's. */
export const SERVICE_PROXY_NAME = { "service.kubernetes.io/service-proxy-name": "aether" };
/** The annotation on a ServiceImport naming its clusterset VIP Service (as MCS controllers do). */
export const DERIVED_SERVICE = "multicluster.kubernetes.io/derived-service";

/** Inputs of one plan. */
export interface McsInputs {
  /** This cluster's MCS cluster id. */
  cluster: string;
  exports: readonly ServiceExportShape[];
  services: readonly ServiceShape[];
  namespaces: ReadonlySet<string>;
  /** This cluster's EndpointSlices and its pods' identities (`ns/name` →), for the endpoints. */
  slices: readonly EndpointSliceShape[];
  pods: ReadonlyMap<string, PodIdentity>;
  /** This cluster's SPIFFE trust domain: endpoints then carry their SPIFFE ID. */
  trustDomain?: string;
  /**
   * East-west gateway mode: this cluster's gateway (`<ip>:<port>`), which every published
   * endpoint carries; other clusters dial it instead of the pods (lib/mcs/east_west.ts).
   */
  eastWestGateway?: string;
  /** Every origin's exports as read from the registry (this cluster's included once synced). */
  registry: readonly ExportRecord[];
  /** The name of the clusterset VIP Service of `namespace/name` (a hash; see vipServiceName). */
  vipServiceName: (namespace: string, name: string) => string;
}

/** One ServiceImport to keep, with its clusterset VIP Service's name (ClusterSetIP only). */
export interface PlannedImport {
  namespace: string;
  name: string;
  merged: MergedService;
  vipService?: string;
}

/** What the controller wants. */
export interface McsPlan {
  /** This origin's registry partition: `exports/<ns>/<name>` and `eps/<ns>/<svc>/<pod>` → JSON. */
  published: Map<string, string>;
  imports: PlannedImport[];
  /** `namespace/name` of a local ServiceExport → its conditions. */
  exportConditions: Map<string, McsCondition[]>;
}

const nsName = (o: { metadata: { namespace?: string; name: string } }) =>
  `${o.metadata.namespace ?? "default"}/${o.metadata.name}`;

/** The plan for one cluster. */
export function planMcs(inputs: McsInputs): McsPlan {
  const services = new Map(inputs.services.map((s) => [nsName(s), s]));
  const published = new Map<string, string>();
  const local = new Map<string, ReturnType<typeof exportRecord>>();
  for (const exp of inputs.exports) {
    const r = exportRecord(inputs.cluster, exp, services.get(nsName(exp)));
    local.set(nsName(exp), r);
    if (!isInvalidExport(r)) published.set(exportKey(r.namespace, r.name), JSON.stringify(r));
  }
  const exported = new Set([...local].filter(([, r]) => !isInvalidExport(r)).map(([k]) => k));
  const servicePorts = new Map([...exported].map((k) => [k, services.get(k)?.spec?.ports ?? []]));
  const eps = endpointRecords(
    inputs.cluster,
    exported,
    inputs.slices,
    inputs.pods,
    inputs.trustDomain,
    servicePorts,
    inputs.eastWestGateway,
  );
  for (const [k, v] of eps) published.set(k, v);

  const byService = new Map<string, ExportRecord[]>();
  for (const r of inputs.registry) {
    const key = `${r.namespace}/${r.name}`;
    byService.set(key, [...byService.get(key) ?? [], r]);
  }
  const merged = new Map<string, MergedService>();
  for (const [key, records] of byService) merged.set(key, mergeExports(records));

  const imports: PlannedImport[] = [];
  for (const [key, m] of [...merged].sort(([a], [b]) => a < b ? -1 : 1)) {
    const [namespace, name] = key.split("/");
    if (!inputs.namespaces.has(namespace)) continue; // KEP-1645: import only where the namespace is
    imports.push({
      namespace,
      name,
      merged: m,
      ...(m.spec.type === "ClusterSetIP"
        ? { vipService: inputs.vipServiceName(namespace, name) }
        : {}),
    });
  }

  const exportConditions = new Map<string, McsCondition[]>();
  for (const [key, r] of local) {
    if (isInvalidExport(r)) {
      exportConditions.set(key, [
        { type: "Valid", status: "False", reason: r.reason, message: r.message },
        {
          type: "Ready",
          status: "False",
          reason: "Failed",
          message: "not exported: the export is not valid",
        },
      ]);
      continue;
    }
    const m = merged.get(key);
    const inRegistry = inputs.registry.some((e) =>
      e.cluster === inputs.cluster && `${e.namespace}/${e.name}` === key
    );
    const conflicts = m?.conflicts ?? [];
    exportConditions.set(key, [
      { type: "Valid", status: "True", reason: "Valid", message: "the Service can be exported" },
      inRegistry
        ? {
          type: "Ready",
          status: "True",
          reason: "Exported",
          message: `in the clusterset registry; exported by ${m!.clusters.length} cluster(s)`,
        }
        : {
          type: "Ready",
          status: "False",
          reason: "Pending",
          message: "waiting for the export to reach the clusterset registry",
        },
      conflicts.length > 0
        ? {
          type: "Conflict",
          status: "True",
          reason: conflicts.map((c) => c.reason).join(","),
          message: conflicts.map((c) => c.message).join("; "),
        }
        : {
          type: "Conflict",
          status: "False",
          reason: "NoConflicts",
          message: "every exporting cluster agrees on the Service's properties",
        },
    ]);
  }
  return { published, imports, exportConditions };
}
