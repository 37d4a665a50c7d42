/**
 * Mesh names of Services, one rule for the edge and the mesh: a Service's authority is
 * `<svc>.<meshDomain>` (namespace-free); when several Services share a name, the oldest one owns
 * it (Gateway API age order) and the others have no mesh name. A port's cluster is the bare
 * authority for the Service's first port and `<authority>:<port>` for any other TCP port
 * (`<authority>:<port>/udp` for a UDP one, `/sctp` for SCTP).
 * @module
 */
import type { ServicePort, ServiceSpec } from "../core_types.ts";
import { sameItems } from "../../memo/mod.ts";
import type { Obj } from "../object_index.ts";

/** `<svc>.<meshDomain>`. */
export const meshAuthority = (name: string, meshDomain: string): string => `${name}.${meshDomain}`;

/**
 * The cluster name of `port` of `svc`: bare authority for the first port, else
 * `<authority>:<port>`, with `/udp` or `/sctp` for a port of that protocol.
 */
export function portClusterName(
  svc: Obj<ServiceSpec>,
  port: ServicePort,
  meshDomain: string,
  ownsMeshName = true,
): string {
  // A Service whose mesh name an older one owns is still a valid edge backend (Gateway API
  // backendRefs are namespaced): its cluster is named <svc>.<namespace>.<meshDomain>, which no
  // owner's <svc>.<meshDomain> can equal (Service names have no dots).
  const name = ownsMeshName ? svc.metadata.name : `${svc.metadata.name}.${svc.metadata.namespace}`;
  const authority = meshAuthority(name, meshDomain);
  if (port === svc.spec?.ports?.[0]) return authority;
  // A UDP (or SCTP) port may share its number with a TCP one (DNS: TCP and UDP 53).
  const protocol = port.protocol && port.protocol !== "TCP"
    ? `/${port.protocol.toLowerCase()}`
    : "";
  return `${authority}:${port.port}${protocol}`;
}

/** The Services and owners of an owner's last {@link meshNameOwners} call. */
export interface OwnersMemo {
  last?: { services: Obj<ServiceSpec>[]; owners: ReadonlyMap<string, Obj<ServiceSpec>> };
}

/**
 * The Service owning each mesh name (by Service name): the oldest Service of that name (Gateway
 * API age order; a missing creationTimestamp counts as oldest). `services` must be in age order
 * (an ObjectIndex's are): the first of each name owns it. The same (read-only) Map as `memo`'s
 * last call when the Services are the same objects in the same order.
 */
export function meshNameOwners(
  services: Iterable<Obj<ServiceSpec>>,
  memo: OwnersMemo = {},
): ReadonlyMap<string, Obj<ServiceSpec>> {
  const list = [...services];
  const last = memo.last;
  if (last && sameItems(last.services, list)) return last.owners;
  const owners = new Map<string, Obj<ServiceSpec>>();
  for (let i = 0; i < list.length; i++) {
    const name = list[i].metadata.name;
    if (!owners.has(name)) owners.set(name, list[i]);
  }
  memo.last = { services: list, owners };
  return owners;
}
