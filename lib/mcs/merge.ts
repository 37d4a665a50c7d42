/**
 * Every cluster's export of one Service → the clusterset service (pure, KEP-1645): exports are
 * ordered oldest first (ServiceExport creationTimestamp, then cluster id), the oldest export's
 * value wins each property, ports are the union merged by name and then by protocol + port, and
 * a property the exports disagree on raises `Conflict` on every constituent — the KEP requires it
 * on the conflicting export and recommends it on all; the upstream conformance suite expects it
 * on all, a pure port addition included.
 * @module
 */
import type { ConflictReason, ExportedPort, ExportRecord, ServiceImportSpec } from "./types.ts";

/** The clusterset service made of one Service's exports. */
export interface MergedService {
  spec: ServiceImportSpec;
  /** Labels and annotations the ServiceImport carries (the oldest export's exported ones). */
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The exporting clusters, sorted (ServiceImport `status.clusters`). */
  clusters: string[];
  /** Conflicts, in the KEP's reason order; empty when the exports agree. */
  conflicts: { reason: ConflictReason; message: string }[];
}

/** The oldest first; equal times by cluster id. */
export function exportOrder(a: ExportRecord, b: ExportRecord): number {
  const ta = Date.parse(a.exportCreated) || 0;
  const tb = Date.parse(b.exportCreated) || 0;
  if (ta !== tb) return ta - tb;
  return a.cluster < b.cluster ? -1 : a.cluster > b.cluster ? 1 : 0;
}

/** JSON with object keys sorted at every level: equal values give equal text. */
function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(",")}]`;
  if (typeof v === "object" && v !== null) {
    const o = v as Record<string, unknown>;
    return `{${
      Object.keys(o).sort().map((k) => `${JSON.stringify(k)}:${stableJson(o[k])}`).join(",")
    }}`;
  }
  return JSON.stringify(v) ?? "undefined";
}

/** The union of the exports' ports (oldest first), and whether any export disagrees with it. */
export function mergePorts(ordered: ExportRecord[]): { ports: ExportedPort[]; conflict: boolean } {
  const ports: ExportedPort[] = [];
  let conflict = false;
  for (const e of ordered) {
    for (const p of e.ports) {
      const byName = p.name ? ports.find((m) => m.name === p.name) : undefined;
      if (byName) {
        if (byName.protocol !== p.protocol || byName.port !== p.port) conflict = true;
        continue;
      }
      const byPair = ports.find((m) => m.protocol === p.protocol && m.port === p.port);
      if (byPair) {
        if ((byPair.name ?? "") !== (p.name ?? "")) conflict = true;
        continue;
      }
      ports.push(p);
    }
  }
  const key = (p: ExportedPort) => `${p.name ?? ""}/${p.protocol}/${p.port}`;
  const all = ports.map(key).sort().join(",");
  if (ordered.some((e) => e.ports.map(key).sort().join(",") !== all)) conflict = true;
  return { ports, conflict };
}

const PROPERTIES: [ConflictReason, string, (e: ExportRecord) => unknown][] = [
  ["TypeConflict", "type", (e) => e.type],
  ["SessionAffinityConflict", "sessionAffinity", (e) => e.sessionAffinity],
  ["SessionAffinityConfigConflict", "sessionAffinityConfig", (e) => e.sessionAffinityConfig],
  ["LabelsConflict", "exportedLabels", (e) => e.labels],
  ["AnnotationsConflict", "exportedAnnotations", (e) => e.annotations],
  ["InternalTrafficPolicyConflict", "internalTrafficPolicy", (e) => e.internalTrafficPolicy],
  ["TrafficDistributionConflict", "trafficDistribution", (e) => e.trafficDistribution],
  ["IPFamilyConflict", "ipFamilies", (e) => e.ipFamilies],
];

/** Merges one Service's exports (at least one, all of the same namespace/name). */
export function mergeExports(exports: readonly ExportRecord[]): MergedService {
  if (exports.length === 0) throw new Error("mergeExports needs at least one export");
  const ordered = [...exports].sort(exportOrder);
  const oldest = ordered[0];
  const conflicts: MergedService["conflicts"] = [];
  const disagreeing = (get: (e: ExportRecord) => unknown) =>
    ordered.filter((e) => stableJson(get(e)) !== stableJson(get(oldest))).length;
  const note = (reason: ConflictReason, field: string, n: number) =>
    conflicts.push({
      reason,
      message: `${n}/${ordered.length} exporting clusters disagree on ${field}; ` +
        `the oldest export's (cluster "${oldest.cluster}", exported ${oldest.exportCreated}) is used`,
    });
  const { ports, conflict: portConflict } = mergePorts(ordered);
  if (portConflict) {
    conflicts.push({
      reason: "PortConflict",
      message: `the exporting clusters' ports differ; the clusterset service has the union ` +
        `(${
          ports.map((p) => `${p.name ? p.name + ":" : ""}${p.protocol}/${p.port}`).join(", ")
        }), ` +
        `a port defined twice as the oldest export (cluster "${oldest.cluster}") defines it`,
    });
  }
  for (const [reason, field, get] of PROPERTIES) {
    const n = disagreeing(get);
    if (n > 0) note(reason, field, n);
  }
  return {
    spec: {
      type: oldest.type,
      ports,
      sessionAffinity: oldest.sessionAffinity,
      ...(oldest.sessionAffinityConfig !== undefined
        ? { sessionAffinityConfig: oldest.sessionAffinityConfig }
        : {}),
      ipFamilies: oldest.ipFamilies,
      ...(oldest.internalTrafficPolicy
        ? { internalTrafficPolicy: oldest.internalTrafficPolicy }
        : {}),
      ...(oldest.trafficDistribution ? { trafficDistribution: oldest.trafficDistribution } : {}),
    },
    labels: oldest.labels,
    annotations: oldest.annotations,
    clusters: [...new Set(ordered.map((e) => e.cluster))].sort(),
    conflicts,
  };
}
