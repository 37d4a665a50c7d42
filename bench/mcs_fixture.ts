/**
 * The clusterset of the MCS benchmarks (bench/mcs_registry.ts, bench/mcs_eds.ts): each origin's
 * registry map as its registrar builds it (an ExportRecord per Service, the EndpointRecords of
 * one EndpointSlice per Service, values from lib/mcs), cluster B's i-th endpoint change, and the
 * percentile summary both print.
 * @module
 */
import {
  endpointRecords,
  type EndpointSliceShape,
  exportRecord,
  isInvalidExport,
  type PodIdentity,
} from "../lib/mcs/mod.ts";
import { clusterId, exportKey, type Origin } from "../lib/registry/mod.ts";

/** How big each origin's share is. */
export interface ClustersetShape {
  services: number;
  endpoints: number;
}

const NAMESPACES = 20;
const TRUST_DOMAIN = "clusterset.example";

/** The Service ports every exported Service has (the endpoints serve them at 8000 + port). */
export const SERVICE_PORTS = [
  { name: "http", protocol: "TCP", port: 80, appProtocol: "http" },
  { name: "grpc", protocol: "TCP", port: 9090, appProtocol: "kubernetes.io/h2c" },
];

const r1 = (x: number) => Math.round(x * 10) / 10;

/** `origins` origins, half in region eu, half in us: cluster-a, cluster-b, … */
export function clustersetOrigins(origins: number): Origin[] {
  return Array.from({ length: origins }, (_, i) => ({
    region: i < origins / 2 ? "eu" : "us",
    cluster: `cluster-${String.fromCharCode(97 + i)}`,
  }));
}

/** The namespace and name of the `s`-th exported Service (the same in every origin). */
export function serviceName(s: number): { namespace: string; name: string } {
  return {
    namespace: `team-${String(s % NAMESPACES).padStart(2, "0")}`,
    name: `svc-${String(s).padStart(4, "0")}`,
  };
}

/** Nearest-rank percentile of an unsorted list. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}

/** A latency list's n, p50, p90, p99 and max. */
export function summary(xs: number[]): Record<string, number> {
  const [p50Ms, p90Ms, p99Ms] = [50, 90, 99].map((p) => r1(pct(xs, p)));
  return { n: xs.length, p50Ms, p90Ms, p99Ms, maxMs: r1(Math.max(...xs)) };
}

/** A ReplicaSet pod's 5-character suffix. */
function podSuffix(n: number): string {
  const alphabet = "bcdfghjklmnpqrstvwxz2456789";
  let s = "";
  for (let i = 0; i < 5; i++, n = Math.floor(n / alphabet.length)) {
    s += alphabet[n % alphabet.length];
  }
  return s;
}

/**
 * One origin's desired map (keys relative to the origin) as its registrar builds it: an
 * ExportRecord per Service, the EndpointRecords of one EndpointSlice per Service.
 */
export function originMap(
  origin: Origin,
  index: number,
  shape: ClustersetShape,
): Map<string, string> {
  const cluster = clusterId(origin);
  const out = new Map<string, string>();
  const exported = new Set<string>();
  const slices: EndpointSliceShape[] = [];
  const pods = new Map<string, PodIdentity>();
  for (let s = 0; s < shape.services; s++) {
    const { namespace: ns, name } = serviceName(s);
    const rec = exportRecord(cluster, {
      metadata: { namespace: ns, name, creationTimestamp: "2026-11-30T09:00:00Z" },
      spec: { exportedLabels: { app: name, tier: s % 3 === 0 ? "frontend" : "backend" } },
    }, {
      metadata: { namespace: ns, name },
      spec: {
        type: "ClusterIP",
        clusterIP: `10.96.${s >> 8}.${s & 255}`,
        ports: SERVICE_PORTS,
        sessionAffinity: "None",
        ipFamilies: ["IPv4"],
        internalTrafficPolicy: "Cluster",
      },
    });
    if (isInvalidExport(rec)) throw new Error(rec.message);
    out.set(exportKey(ns, name), JSON.stringify(rec));
    exported.add(`${ns}/${name}`);
    const endpoints: NonNullable<EndpointSliceShape["endpoints"]> = [];
    for (let e = 0; e < shape.endpoints; e++) {
      const n = s * shape.endpoints + e;
      const pod = `${name}-7d9f8b6c5-${podSuffix(n)}`;
      pods.set(`${ns}/${pod}`, { namespace: ns, name: pod, serviceAccount: name });
      endpoints.push({
        addresses: [`10.${100 + index}.${n >> 8}.${n & 255}`],
        conditions: { ready: true },
        nodeName: `node-${String(n % 50).padStart(2, "0")}`,
        zone: `zone-${"abc"[n % 3]}`,
        targetRef: { kind: "Pod", name: pod },
      });
    }
    slices.push({
      metadata: { namespace: ns, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      ports: SERVICE_PORTS.map((p) => ({
        name: p.name,
        protocol: p.protocol,
        port: 8000 + p.port,
      })),
      endpoints,
    });
  }
  for (const [k, v] of endpointRecords(cluster, exported, slices, pods, TRUST_DOMAIN)) {
    out.set(k, v);
  }
  return out;
}

/**
 * Cluster B's `i`-th change: one endpoint (a different one each time) has a new pod IP; with
 * the namespace and Service of the endpoint (`eps/<ns>/<svc>/<pod>`).
 */
export function changed(base: Map<string, string>, epKeys: string[], i: number) {
  const key = epKeys[(i * 7919) % epKeys.length];
  const ip = `10.250.${i >> 8}.${i & 255}`;
  const rec = { ...JSON.parse(base.get(key)!), ip };
  const [, namespace, service] = key.split("/");
  return { key, value: JSON.stringify(rec), ip, namespace, service };
}
