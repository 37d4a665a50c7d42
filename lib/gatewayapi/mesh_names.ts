/**
 * Mesh names of Services, one rule for the edge and the mesh: a Service's authority is
 * `<svc>.<meshDomain>` (namespace-free); when several Services share a name, the oldest one owns
 * it (Gateway API age order) and the others have no mesh name. A port's cluster is the bare
 * authority for the Service's first port and `<authority>:<port>` for any other.
 * @module
 */
import type { ServicePort, ServiceSpec } from "./core_types.ts";
import { type Obj, sortByAge } from "./snapshot.ts";

/** `<svc>.<meshDomain>`. */
export const meshAuthority = (name: string, meshDomain: string): string => `${name}.${meshDomain}`;

/** The cluster name of `port` of `svc`: bare authority for the first port, else `<authority>:<port>`. */
export function portClusterName(
  svc: Obj<ServiceSpec>,
  port: ServicePort,
  meshDomain: string,
): string {
  const seen = clusterNames.get(port);
  if (seen?.svc === svc && seen.meshDomain === meshDomain) return seen.name;
  const authority = meshAuthority(svc.metadata.name, meshDomain);
  const name = port === svc.spec?.ports?.[0] ? authority : `${authority}:${port.port}`;
  clusterNames.set(port, { svc, meshDomain, name });
  return name;
}

/**
 * Cluster names by (admitted, read-only) Service port: every resolve after an edit names the
 * clusters of the same ports again (once per backendRef of every route).
 */
const clusterNames = new WeakMap<
  ServicePort,
  { svc: Obj<ServiceSpec>; meshDomain: string; name: string }
>();

/** The Service owning each mesh name (by Service name): the oldest Service of that name. */
export function meshNameOwners(
  services: Iterable<Obj<ServiceSpec>>,
): Map<string, Obj<ServiceSpec>> {
  const owners = new Map<string, Obj<ServiceSpec>>();
  for (const svc of sortByAge(services)) {
    if (!owners.has(svc.metadata.name)) owners.set(svc.metadata.name, svc);
  }
  return owners;
}
