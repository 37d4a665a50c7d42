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

/** The Services and owners of the last call: a resolve after a route edit asks again. */
let last:
  | { services: Obj<ServiceSpec>[]; owners: ReadonlyMap<string, Obj<ServiceSpec>> }
  | undefined;

/**
 * The Service owning each mesh name (by Service name): the oldest Service of that name. The same
 * (read-only) Map as the last call's when the Services are the same objects in the same order.
 */
export function meshNameOwners(
  services: Iterable<Obj<ServiceSpec>>,
): ReadonlyMap<string, Obj<ServiceSpec>> {
  const list = [...services];
  if (
    last && last.services.length === list.length && last.services.every((s, i) => s === list[i])
  ) {
    return last.owners;
  }
  const owners = new Map<string, Obj<ServiceSpec>>();
  for (const svc of sortByAge(list)) {
    if (!owners.has(svc.metadata.name)) owners.set(svc.metadata.name, svc);
  }
  last = { services: list, owners };
  return owners;
}
