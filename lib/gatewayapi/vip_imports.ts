/**
 * Clusterset VIP Services: a Service the MCS controller makes for a ServiceImport (annotated with
 * the import's name), whose ClusterIP a pod dials for the `clusterset.local` name. Its ports are
 * captured into the import's clusterset endpoints and dialled with the import's clusterset SNI.
 * @module
 */
import type { ServiceImportSpec, ServicePort, ServiceSpec } from "./core_types.ts";
import { clustersetSni, VIP_SERVICE_IMPORT_ANNOTATION } from "../mcs/mod.ts";
import type { Obj, ObjectIndex } from "./object_index.ts";

/** An import port and a VIP Service port are one port: same number and protocol. */
function samePort(a: ServicePort, b: ServicePort): boolean {
  return a.port === b.port && (a.protocol ?? "TCP") === (b.protocol ?? "TCP");
}

/** The ServiceImport a VIP Service stands for, when `svc` is one and the import is indexed. */
function vipImport(
  indexed: ObjectIndex,
  svc: Obj<ServiceSpec>,
): { key: string; name: string; si: Obj<ServiceImportSpec> } | undefined {
  const annotations = svc.metadata.annotations as Record<string, string> | undefined;
  const name = annotations?.[VIP_SERVICE_IMPORT_ANNOTATION];
  if (typeof name !== "string") return undefined;
  const key = `${svc.metadata.namespace}/${name}`;
  const si = indexed.serviceImports.get(key);
  return si ? { key, name, si } : undefined;
}

/**
 * The import port (and the import's `<ns>/<name>` key) a VIP Service's `port` stands for;
 * undefined for any other Service, or while the import is not there or lacks that port.
 */
export function vipImportPort(
  indexed: ObjectIndex,
  svc: Obj<ServiceSpec>,
  port: ServicePort,
): { key: string; port: ServicePort } | undefined {
  const found = vipImport(indexed, svc);
  const importPort = found?.si.spec?.ports?.find((p) => samePort(p, port));
  return found && importPort ? { key: found.key, port: importPort } : undefined;
}

/**
 * The SNI a clusterset VIP Service's `port` is dialled with: its ServiceImport's clusterset SNI
 * (what the exporting clusters' pods and east-west gateways pick the Service port by), while
 * the import has that port; undefined for any other Service and for UDP.
 */
export function vipImportSni(
  indexed: ObjectIndex,
  svc: Obj<ServiceSpec>,
  port: ServicePort,
): string | undefined {
  if (port.protocol === "UDP") return undefined;
  const found = vipImport(indexed, svc);
  if (!found?.si.spec?.ports?.some((p) => samePort(p, port))) return undefined;
  return clustersetSni(svc.metadata.namespace, found.name, port.port);
}
