/**
 * ServiceImport endpoints remembered across resolves: by the import's ClusterSetEndpoints spec
 * (the registry source hands an unchanged service over as the same object), then by use and
 * port. An unchanged import gives the very same endpoints array, so translation keeps its
 * ClusterLoadAssignment (memoized by that array) and encoding skips it: one endpoint changed in
 * another cluster re-makes one import's assignments, not every import's.
 * @module
 */
import type { ClusterSetEndpointsSpec, ServicePort } from "./core_types.ts";
import type { IREndpoint } from "../ir/mod.ts";
import type { IdentityMemo } from "../memo/mod.ts";
import { importEndpoints } from "./imports.ts";

/** Endpoints of import ports by ClusterSetEndpoints spec, then `<use>|<port>`. */
export type ImportEndpointsMemo = IdentityMemo<ClusterSetEndpointsSpec, Map<string, IREndpoint[]>>;

/**
 * `importEndpoints(spec, port)`, the same array while `spec` is the same object. Each `use` (the
 * import's own cluster, a clusterset VIP Service's) gets its own array: two clusters never share
 * one (translation remembers an assignment per array and cluster name).
 */
export function memoizedImportEndpoints(
  memo: ImportEndpointsMemo,
  use: "import" | "vip",
  spec: ClusterSetEndpointsSpec | undefined,
  port: ServicePort,
): IREndpoint[] {
  if (!spec) return importEndpoints(spec, port);
  let byPort = memo.peek(spec);
  if (!byPort) memo.set(spec, byPort = new Map());
  const key = `${use}|${port.name ?? ""}|${port.protocol ?? "TCP"}|${port.port}`;
  const seen = byPort.get(key);
  memo.count(seen !== undefined);
  if (seen) return seen;
  const endpoints = importEndpoints(spec, port);
  byPort.set(key, endpoints);
  return endpoints;
}
