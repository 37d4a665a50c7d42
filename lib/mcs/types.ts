/**
 * The Multi-Cluster Services API (`multicluster.x-k8s.io`, KEP-1645) as aether uses it: the fields
 * of ServiceExport and ServiceImport it reads and writes, and the record one cluster publishes in
 * the registry for each exported Service.
 * @module
 */
import { createHash } from "node:crypto";

/** The MCS API group. */
export const MCS_GROUP = "multicluster.x-k8s.io";
/** The version aether writes (storage); v1alpha1 is served with the same schema. */
export const MCS_VERSION = "v1beta1";

/**
 * The annotation on a clusterset VIP Service (the selector-less Service the MCS controller makes
 * for a ClusterSetIP ServiceImport) naming its ServiceImport: traffic to the VIP goes to the
 * import's clusterset endpoints.
 */
export const VIP_SERVICE_IMPORT_ANNOTATION = "multicluster.aether.io/service-import";

/**
 * The clusterset VIP Service's name of ServiceImport `namespace/name`: `mcs-` + the first 12 hex
 * digits of SHA-256(`<namespace>/<name>`) — a DNS label, stable, computed alike by the MCS
 * controller (which makes the Service) and resolve (which attaches ServiceImport parentRefs to it).
 */
export function vipServiceName(namespace: string, name: string): string {
  return `mcs-${createHash("sha256").update(`${namespace}/${name}`).digest("hex").slice(0, 12)}`;
}

/** A port of an exported Service (ServiceImport `spec.ports[]`). */
export interface ExportedPort {
  name?: string;
  protocol: string;
  port: number;
  appProtocol?: string;
}

/** `ClusterSetIP` (a clusterset VIP) or `Headless` (endpoint addresses only). */
export type ImportType = "ClusterSetIP" | "Headless";

/** The ServiceImport spec aether derives from the exports (`ips` is each cluster's own). */
export interface ServiceImportSpec {
  type: ImportType;
  ports: ExportedPort[];
  sessionAffinity: string;
  sessionAffinityConfig?: unknown;
  ipFamilies: string[];
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
}

/**
 * What one cluster says about one exported Service: its Service's shape at export time and when
 * the export was made (the KEP's conflict order). The registry's `exports/<ns>/<name>` value.
 */
export interface ExportRecord extends ServiceImportSpec {
  /** The exporting cluster's MCS cluster id (`<cluster>.<region>`). */
  cluster: string;
  namespace: string;
  name: string;
  /** The ServiceExport's creationTimestamp (RFC 3339): the oldest export wins a conflict. */
  exportCreated: string;
  /** ServiceExport `spec.exportedLabels` / `exportedAnnotations`. */
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The KEP's Conflict reasons aether raises. */
export type ConflictReason =
  | "PortConflict"
  | "TypeConflict"
  | "SessionAffinityConflict"
  | "SessionAffinityConfigConflict"
  | "LabelsConflict"
  | "AnnotationsConflict"
  | "InternalTrafficPolicyConflict"
  | "TrafficDistributionConflict"
  | "IPFamilyConflict";
