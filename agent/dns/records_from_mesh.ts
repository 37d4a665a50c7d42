/**
 * Mesh DNS records from resolve's output (pure): each MeshService's authority `<svc>.<meshDomain>`
 * gets its IPv4 VIPs as A and its IPv6 VIPs as AAAA. The MeshIR holds one service per mesh name —
 * the owner resolve chose (the oldest Service of that name; a missing creationTimestamp counts as
 * oldest) — so DNS answers exactly the Service the proxies route `<svc>.<meshDomain>` to.
 * Headless and VIP-less services get no record.
 * @module
 */
import type { MeshIR } from "../../lib/ir/mod.ts";
import type { Sink } from "../../lib/engine/mod.ts";
import type { RecordSet } from "./records.ts";
import { ipv4Bytes, ipv6Bytes } from "./records.ts";
import { normalizeName } from "./wire.ts";

/** The record map of a MeshIR's services, keyed by normalized authority. */
export function recordsFromMesh(mesh: Pick<MeshIR, "services">): Map<string, RecordSet> {
  const records = new Map<string, RecordSet>();
  for (const svc of mesh.services) {
    const a = svc.vips.filter((ip) => ipv4Bytes(ip));
    const aaaa = svc.vips.filter((ip) => ipv6Bytes(ip));
    if (!a.length && !aaaa.length) continue; // headless, ExternalName or no VIP yet
    records.set(normalizeName(svc.authority), { a, aaaa });
  }
  return records;
}

/**
 * The engine sink that keeps the responder's mesh records current: mesh names answer with the
 * VIPs of resolve's mesh services (one owner rule with xDS).
 */
export function meshRecordsSink(
  responder: { setRecords(records: Map<string, RecordSet>): void },
): Sink {
  return {
    name: "dns",
    apply: ({ result }) => responder.setRecords(recordsFromMesh(result.mesh)),
  };
}
