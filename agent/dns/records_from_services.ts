/**
 * Kubernetes Services → mesh DNS records (pure). `<svc>.<meshDomain>` gets the Service's IPv4 VIPs
 * as A and its IPv6 VIPs as AAAA, from `spec.clusterIPs` (dual stack) or else `spec.clusterIP`.
 * Headless (`None`) and VIP-less Services get no record.
 *
 * Mesh names are namespace-free, so two Services with one name in different namespaces conflict
 * (the controller's webhook normally prevents it). The winner is deterministic: the oldest
 * `metadata.creationTimestamp` (a missing timestamp counts as newest), then the namespace that
 * sorts first. Losers are returned in `conflicts` for the caller to log or report.
 * @module
 */
import type { RecordSet } from "./records.ts";
import { ipv4Bytes, ipv6Bytes } from "./records.ts";
import { normalizeName } from "./wire.ts";

/** The fields of a Service this function reads. */
export interface ServiceLike {
  metadata: { name: string; namespace?: string; creationTimestamp?: string };
  spec?: { clusterIP?: string; clusterIPs?: string[] };
}

/** A Service that lost its mesh name to another. */
export interface RecordConflict {
  name: string;
  winner: string;
  loser: string;
}

/** Records plus the conflicts found. */
export interface ServiceRecords {
  records: Map<string, RecordSet>;
  conflicts: RecordConflict[];
}

function created(s: ServiceLike): number {
  const t = s.metadata.creationTimestamp ? Date.parse(s.metadata.creationTimestamp) : NaN;
  return Number.isNaN(t) ? Number.POSITIVE_INFINITY : t;
}

function ns(s: ServiceLike): string {
  return s.metadata.namespace ?? "default";
}

/** Orders Services by precedence: oldest first, then namespace. */
function before(a: ServiceLike, b: ServiceLike): number {
  const d = created(a) - created(b);
  if (d !== 0 && !Number.isNaN(d)) return d < 0 ? -1 : 1;
  return ns(a) < ns(b) ? -1 : ns(a) > ns(b) ? 1 : 0;
}

/** The record map (and conflicts) for a set of Services. */
export function recordsFromServicesDetailed(
  services: Iterable<ServiceLike>,
  meshDomain: string,
): ServiceRecords {
  const domain = normalizeName(meshDomain);
  const winners = new Map<string, ServiceLike>();
  const conflicts: RecordConflict[] = [];
  const sorted = [...services].sort(before);
  const records = new Map<string, RecordSet>();
  for (const s of sorted) {
    const ips = s.spec?.clusterIPs?.length
      ? s.spec.clusterIPs
      : s.spec?.clusterIP
      ? [s.spec.clusterIP]
      : [];
    const a = ips.filter((ip) => ipv4Bytes(ip));
    const aaaa = ips.filter((ip) => ipv6Bytes(ip));
    if (!a.length && !aaaa.length) continue; // headless, ExternalName or no VIP yet
    const name = `${normalizeName(s.metadata.name)}.${domain}`;
    const prev = winners.get(name);
    if (prev) {
      conflicts.push({
        name,
        winner: `${ns(prev)}/${prev.metadata.name}`,
        loser: `${ns(s)}/${s.metadata.name}`,
      });
      continue;
    }
    winners.set(name, s);
    records.set(name, { a, aaaa });
  }
  return { records, conflicts };
}

/** The record map for a set of Services (see the module doc for conflict resolution). */
export function recordsFromServices(
  services: Iterable<ServiceLike>,
  meshDomain: string,
): Map<string, RecordSet> {
  return recordsFromServicesDetailed(services, meshDomain).records;
}
