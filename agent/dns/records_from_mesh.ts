/**
 * Mesh DNS records from resolve's output (pure): each MeshService's authority `<svc>.<meshDomain>`
 * gets its IPv4 VIPs as A and its IPv6 VIPs as AAAA. The MeshIR holds one service per mesh name —
 * the owner resolve chose (the oldest Service of that name; a missing creationTimestamp counts as
 * oldest) — so DNS answers exactly the Service the proxies route `<svc>.<meshDomain>` to.
 * Headless and VIP-less services get no record. The owner's named ports (from its Service object in
 * the same revision) answer SRV at `_<port>._<proto>.<svc>.<meshDomain>`, as Kubernetes DNS names
 * Service ports. In a clusterset, each ServiceImport answers at
 * `<name>.<ns>.svc.clusterset.local` (KEP-1645 DNS): its clusterset VIPs (`spec.ips`), or for a
 * headless import every exporting cluster's endpoint addresses (from ClusterSetEndpoints; not
 * those behind another cluster's east-west gateway, which this cluster's pods cannot dial); an
 * import with no address gets no record (NXDOMAIN), as the spec asks. SRV at the name itself: a
 * ClusterSetIP import's port numbers, each once, target the name; a headless import's endpoints,
 * each at `<hostname>.<clusterid>.<name>` (hostname: the address with dashes), which answers A/AAAA.
 * @module
 */
import type { MeshIR } from "../../lib/ir/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { Sink } from "../../lib/engine/mod.ts";
import type { RecordSet, SrvPort } from "./records.ts";
import { ipv4Bytes, ipv6Bytes } from "./records.ts";
import { normalizeName } from "./wire_answer.ts";

interface ServicePortSpec {
  name?: string;
  protocol?: string;
  port?: number;
}

/** The named ports of Service `svc` that the mesh service serves. */
function srvPorts(svc: KubeObject | undefined, served: ReadonlySet<number>): SrvPort[] {
  const ports = (svc?.spec?.ports ?? []) as ServicePortSpec[];
  return ports.filter((p) => p.name && typeof p.port === "number" && served.has(p.port))
    .map((p) => ({
      service: p.name!.toLowerCase(),
      proto: (p.protocol ?? "TCP").toLowerCase(),
      port: p.port!,
    }));
}

/**
 * The record map of a MeshIR's services, keyed by normalized authority; `objects` (the revision's
 * objects) add the SRV ports.
 */
export function recordsFromMesh(
  mesh: Pick<MeshIR, "services">,
  objects: readonly KubeObject[] = [],
): Map<string, RecordSet> {
  const records = new Map<string, RecordSet>();
  const services = new Map<string, KubeObject>();
  for (const o of objects) {
    if (o.kind === "Service") services.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  }
  for (const svc of mesh.services) {
    const a = svc.vips.filter((ip) => ipv4Bytes(ip));
    const aaaa = svc.vips.filter((ip) => ipv6Bytes(ip));
    if (!a.length && !aaaa.length) continue; // headless, ExternalName or no VIP yet
    const served = new Set(svc.ports.map((p) => p.port));
    const srv = srvPorts(services.get(`${svc.namespace}/${svc.name}`), served);
    records.set(normalizeName(svc.authority), { a, aaaa, ...(srv.length ? { srv } : {}) });
  }
  return records;
}

/** The zone of clusterset names (KEP-1645). */
export const CLUSTERSET_DOMAIN = "clusterset.local";

/** The version of the multicluster DNS schema aether answers (KEP-1645 DNS specification). */
export const CLUSTERSET_DNS_VERSION = "1.0.0";

/**
 * Clusterset records of the revision's ServiceImports, keyed by normalized name, and the zone's
 * `dns-version` TXT record.
 */
export function recordsFromClusterSet(objects: readonly KubeObject[]): Map<string, RecordSet> {
  const endpoints = new Map<string, string[]>();
  /** Per headless candidate: `<hostname>.<clusterid>` → its address. */
  const hosts = new Map<string, Map<string, string>>();
  for (const o of objects) {
    if (o.kind !== "ClusterSetEndpoints") continue;
    // An endpoint behind another cluster's east-west gateway is left out: its pod address is
    // not routed from here, and a plain dial carries no SNI for the gateway to route by.
    const list = ((o.spec?.endpoints ?? []) as {
      address?: unknown;
      cluster?: unknown;
      gateway?: unknown;
    }[]).filter((e) => e.gateway === undefined);
    const key = `${o.metadata.namespace}/${o.metadata.name}`;
    endpoints.set(
      key,
      [...new Set(list.flatMap((e) => typeof e.address === "string" ? [e.address] : []))].sort(),
    );
    const h = new Map<string, string>();
    for (const e of list) {
      if (typeof e.address !== "string" || typeof e.cluster !== "string") continue;
      h.set(`${e.address.replaceAll(/[.:]/g, "-")}.${e.cluster}`, e.address);
    }
    hosts.set(key, h);
  }
  const records = new Map<string, RecordSet>([
    [`dns-version.${CLUSTERSET_DOMAIN}`, { a: [], aaaa: [], txt: [CLUSTERSET_DNS_VERSION] }],
  ]);
  for (const o of objects) {
    if (o.kind !== "ServiceImport") continue;
    const key = `${o.metadata.namespace}/${o.metadata.name}`;
    const headless = o.spec?.type === "Headless";
    const addresses: string[] = headless
      ? endpoints.get(key) ?? []
      : ((o.spec?.ips ?? []) as unknown[]).filter((ip): ip is string => typeof ip === "string");
    const a = addresses.filter((ip) => ipv4Bytes(ip)),
      aaaa = addresses.filter((ip) => ipv6Bytes(ip));
    if (!a.length && !aaaa.length) continue;
    const ports = ((o.spec?.ports ?? []) as ServicePortSpec[]).filter((p) =>
      p.name && typeof p.port === "number"
    ).map((p) => ({
      service: p.name!.toLowerCase(),
      proto: (p.protocol ?? "TCP").toLowerCase(),
      port: p.port!,
    }));
    const name = normalizeName(
      `${o.metadata.name}.${o.metadata.namespace}.svc.${CLUSTERSET_DOMAIN}`,
    );
    const numbers = [
      ...new Set(
        ((o.spec?.ports ?? []) as ServicePortSpec[]).flatMap((p) =>
          typeof p.port === "number" ? [p.port] : []
        ),
      ),
    ].sort((x, y) => x - y);
    // SRV at the name: a ClusterSetIP import's port numbers (target: the name); a headless
    // import's endpoints, each at <hostname>.<clusterid>.<name> (hostname: its address, dashed).
    const targets = headless
      ? [...hosts.get(key) ?? []].sort(([x], [y]) => x < y ? -1 : 1).map(([h, ip]) => {
        const target = `${h}.${name}`;
        records.set(target, {
          a: ipv4Bytes(ip) ? [ip] : [],
          aaaa: ipv6Bytes(ip) ? [ip] : [],
        });
        return target;
      })
      : [name];
    const nameSrv = targets.flatMap((target) => numbers.map((port) => ({ port, target })));
    records.set(name, {
      a,
      aaaa,
      ...(ports.length ? { srv: ports } : {}),
      ...(nameSrv.length ? { nameSrv } : {}),
    });
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
    apply: ({ input, result }) =>
      responder.setRecords(
        new Map([
          ...recordsFromMesh(result.mesh, input.objects),
          ...recordsFromClusterSet(input.objects),
        ]),
      ),
  };
}
