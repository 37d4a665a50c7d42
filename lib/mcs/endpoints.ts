/**
 * One cluster's ready endpoints of its exported Services → the registry's `eps/<ns>/<svc>/<pod>`
 * records (pure): the pod's address, the Service ports' target ports, where it runs (node,
 * zone) and who it is (ServiceAccount, and its SPIFFE ID when the trust domain is known), so an
 * importer dials it over mTLS and verifies exactly that workload.
 * @module
 */
import { endpointKey } from "../registry/mod.ts";
import { parseRecord } from "./json_record.ts";
import { parseGatewayAddress } from "./east_west.ts";

/** One endpoint in the registry. */
export interface EndpointRecord {
  /** The exporting cluster's MCS cluster id. */
  cluster: string;
  namespace: string;
  service: string;
  /** The pod's name (or the address, for an endpoint without a pod). */
  pod: string;
  ip: string;
  /**
   * The Service's ports by name as this endpoint serves them (`port`: the target port), each with
   * the exported Service's own port number (`servicePort`) when the registrar knew it: a port of
   * the ServiceImport reaches only the clusters that export it with that number
   * (StrictPortConflict: same name, another number in a newer export → not that cluster).
   */
  ports: { name: string; protocol: string; port: number; servicePort?: number }[];
  node?: string;
  zone?: string;
  serviceAccount?: string;
  /** `spiffe://<trust domain>/ns/<ns>/sa/<sa>` when the registrar knows its trust domain. */
  spiffeId?: string;
  /**
   * East-west gateway mode: the `<ip>:<port>` of this cluster's east-west gateway, which other
   * clusters dial instead of the pod (lib/mcs/east_west.ts).
   */
  gateway?: string;
}

/** The parts of an EndpointSlice (discovery.k8s.io/v1) read. */
export interface EndpointSliceShape {
  metadata: { namespace?: string; labels?: Record<string, string> };
  addressType?: string;
  ports?: { name?: string; protocol?: string; port?: number }[] | null;
  endpoints?: {
    addresses?: string[];
    conditions?: { ready?: boolean | null };
    nodeName?: string;
    zone?: string;
    targetRef?: { kind?: string; name?: string };
  }[];
}

/** The parts of a Pod read: its ServiceAccount. */
export interface PodIdentity {
  namespace: string;
  name: string;
  serviceAccount: string;
}

/** A Service port as read for {@link endpointRecords}. */
export interface ServicePortShape {
  name?: string;
  protocol?: string;
  port?: number;
}

/**
 * Registry records of the ready endpoints of `exported` Services (`ns/name`), keyed by their key
 * inside the origin. An endpoint listed twice (two address families) keeps its IPv4 address.
 * `servicePorts` (`ns/name` → the Service's ports) gives each endpoint port its Service port;
 * `gateway`: this cluster's east-west gateway (`<ip>:<port>`), carried by every record.
 */
export function endpointRecords(
  cluster: string,
  exported: ReadonlySet<string>,
  slices: readonly EndpointSliceShape[],
  pods: ReadonlyMap<string, PodIdentity>,
  trustDomain?: string,
  servicePorts?: ReadonlyMap<string, readonly ServicePortShape[]>,
  gateway?: string,
): Map<string, string> {
  const out = new Map<string, EndpointRecord>();
  for (const s of slices) {
    const ns = s.metadata.namespace ?? "default";
    const service = s.metadata.labels?.["kubernetes.io/service-name"];
    if (!service || !exported.has(`${ns}/${service}`)) continue;
    if (s.addressType !== "IPv4" && s.addressType !== "IPv6") continue;
    const own = servicePorts?.get(`${ns}/${service}`) ?? [];
    const ports = (s.ports ?? []).filter((p) => p.port !== undefined).map((p) => {
      const name = p.name ?? "", protocol = p.protocol ?? "TCP";
      const sp = own.find((o) => (o.name ?? "") === name && (o.protocol ?? "TCP") === protocol);
      return { name, protocol, port: p.port!, ...(sp?.port ? { servicePort: sp.port } : {}) };
    });
    for (const e of s.endpoints ?? []) {
      if (e.conditions?.ready === false || !e.addresses?.length) continue;
      const podName = e.targetRef?.kind === "Pod" && e.targetRef.name
        ? e.targetRef.name
        : undefined;
      const pod = podName ?? e.addresses[0];
      const key = endpointKey(ns, service, pod);
      const prior = out.get(key);
      if (prior && (s.addressType === "IPv6" || !prior.ip.includes(":"))) continue;
      const identity = podName ? pods.get(`${ns}/${podName}`) : undefined;
      out.set(key, {
        cluster,
        namespace: ns,
        service,
        pod,
        ip: e.addresses[0],
        ports,
        ...(e.nodeName ? { node: e.nodeName } : {}),
        ...(e.zone ? { zone: e.zone } : {}),
        ...(identity ? { serviceAccount: identity.serviceAccount } : {}),
        ...(identity && trustDomain
          ? { spiffeId: `spiffe://${trustDomain}/ns/${ns}/sa/${identity.serviceAccount}` }
          : {}),
        ...(gateway ? { gateway } : {}),
      });
    }
  }
  return new Map(
    [...out].sort(([a], [b]) => a < b ? -1 : 1).map(([k, v]) => [k, JSON.stringify(v)]),
  );
}

/** A registry value read back as an EndpointRecord, or undefined when it is not one. */
export function parseEndpointRecord(value: string): EndpointRecord | undefined {
  const r = parseRecord(value, ["cluster", "namespace", "service", "pod", "ip"], true);
  if (r?.gateway !== undefined && !parseGatewayAddress(String(r.gateway))) return undefined;
  if (r?.gateway !== undefined && typeof r.gateway !== "string") return undefined;
  return r;
}
