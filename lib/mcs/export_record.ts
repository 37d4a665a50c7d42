/**
 * One cluster's ServiceExport + Service → the record it publishes (pure), or why the export is not
 * valid (the ServiceExport's `Valid=False` reason, from KEP-1645).
 * @module
 */
import { parseRecord } from "./json_record.ts";
import type { ExportedPort, ExportRecord } from "./types.ts";

/** The parts of a Service an export reads. */
export interface ServiceShape {
  metadata: { namespace?: string; name: string };
  spec?: {
    type?: string;
    clusterIP?: string;
    ports?: { name?: string; protocol?: string; port?: number; appProtocol?: string }[];
    sessionAffinity?: string;
    sessionAffinityConfig?: unknown;
    ipFamilies?: string[];
    internalTrafficPolicy?: string;
    trafficDistribution?: string;
  };
}

/** The parts of a ServiceExport an export reads. */
export interface ServiceExportShape {
  metadata: { namespace?: string; name: string; creationTimestamp?: string };
  spec?: { exportedLabels?: Record<string, string>; exportedAnnotations?: Record<string, string> };
}

/** A ServiceExport that cannot be exported: its `Valid=False` reason and message. */
export interface InvalidExport {
  reason: "NoService" | "InvalidServiceType";
  message: string;
}

/** The record `cluster` publishes for `exp`, or why it publishes none. */
export function exportRecord(
  cluster: string,
  exp: ServiceExportShape,
  service: ServiceShape | undefined,
): ExportRecord | InvalidExport {
  const ns = exp.metadata.namespace ?? "default";
  if (!service) {
    return { reason: "NoService", message: `Service ${ns}/${exp.metadata.name} does not exist` };
  }
  const spec = service.spec ?? {};
  if (spec.type === "ExternalName") {
    return {
      reason: "InvalidServiceType",
      message: "a Service of type ExternalName cannot be exported (KEP-1645)",
    };
  }
  const ports: ExportedPort[] = (spec.ports ?? []).map((p) => ({
    ...(p.name ? { name: p.name } : {}),
    protocol: p.protocol ?? "TCP",
    port: p.port ?? 0,
    ...(p.appProtocol ? { appProtocol: p.appProtocol } : {}),
  }));
  return {
    cluster,
    namespace: ns,
    name: exp.metadata.name,
    exportCreated: exp.metadata.creationTimestamp ?? "",
    type: spec.clusterIP === "None" ? "Headless" : "ClusterSetIP",
    ports,
    sessionAffinity: spec.sessionAffinity ?? "None",
    ...(spec.sessionAffinityConfig ? { sessionAffinityConfig: spec.sessionAffinityConfig } : {}),
    ipFamilies: spec.ipFamilies ?? ["IPv4"],
    ...(spec.internalTrafficPolicy ? { internalTrafficPolicy: spec.internalTrafficPolicy } : {}),
    ...(spec.trafficDistribution ? { trafficDistribution: spec.trafficDistribution } : {}),
    labels: exp.spec?.exportedLabels ?? {},
    annotations: exp.spec?.exportedAnnotations ?? {},
  };
}

/** Whether `r` is an invalid export rather than a record. */
export function isInvalidExport(r: ExportRecord | InvalidExport): r is InvalidExport {
  return "reason" in r;
}

/**
 * A registry value read back as an ExportRecord, or undefined when it is not one (a registry
 * holds what other clusters wrote: never trusted to be well-formed).
 */
export function parseExportRecord(value: string): ExportRecord | undefined {
  const v = parseRecord(value, [
    "cluster",
    "namespace",
    "name",
    "exportCreated",
    "sessionAffinity",
  ]);
  if (!v || (v.type !== "ClusterSetIP" && v.type !== "Headless")) return undefined;
  if (!Array.isArray(v.ipFamilies)) return undefined;
  if (typeof v.labels !== "object" || typeof v.annotations !== "object") return undefined;
  return v as ExportRecord;
}
