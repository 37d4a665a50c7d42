/**
 * Mesh records: the name → VIP view the responder reads on every query, so an update is visible to
 * the next query.
 * @module
 */
import { normalizeName } from "./wire_answer.ts";

/** One named port of a mesh service: answers SRV at `_<service>._<proto>.<mesh name>`. */
export interface SrvPort {
  /** The port's name, lower-case (the Service port's `name`). */
  service: string;
  /** "tcp", "udp" or "sctp" (the port's `protocol`, lower-case). */
  proto: string;
  port: number;
}

/** The addresses of one mesh name. */
export interface RecordSet {
  /** IPv4 VIPs (dotted quads). */
  a: string[];
  /** IPv6 VIPs. */
  aaaa: string[];
  /** Named ports (RFC 2782 SRV, named as Kubernetes names Service ports); absent = none. */
  srv?: SrvPort[];
  /** TXT strings (each at most 255 bytes; the clusterset zone's `dns-version`); absent = none. */
  txt?: string[];
  /**
   * SRV records at the name itself (KEP-1645 DNS: `<svc>.<ns>.svc.clusterset.local` SRV): a
   * ClusterSetIP import's each port number once, target the name; a headless import's each
   * endpoint per port number, target `<hostname>.<clusterid>.<svc>.<ns>.svc.clusterset.local`.
   * Absent = NODATA.
   */
  nameSrv?: { port: number; target: string }[];
}

/** Where the responder looks mesh names up. Names are passed lower-case, without a trailing dot. */
export interface MeshRecords {
  lookup(name: string): RecordSet | undefined;
}

/** Input accepted by `setRecords`: a Map or a plain object keyed by (any-case) FQDN. */
export type RecordMap = Map<string, RecordSet> | Record<string, RecordSet>;

/** An immutable set of records keyed by normalized name. */
export class StaticRecords implements MeshRecords {
  readonly #byName: Map<string, RecordSet>;
  constructor(records: RecordMap = new Map()) {
    const entries = records instanceof Map ? [...records] : Object.entries(records);
    this.#byName = new Map(entries.map(([k, v]) => [normalizeName(k), v]));
  }
  lookup(name: string): RecordSet | undefined {
    return this.#byName.get(name);
  }
  /** Number of names. */
  get size(): number {
    return this.#byName.size;
  }
}

/** Parses a dotted-quad IPv4 address into 4 bytes, or undefined when invalid. */
export function ipv4Bytes(ip: string): Uint8Array | undefined {
  const parts = ip.split(".");
  if (parts.length !== 4) return undefined;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!/^\d{1,3}$/.test(parts[i])) return undefined;
    const n = Number(parts[i]);
    if (n > 255) return undefined;
    out[i] = n;
  }
  return out;
}

/** Parses an IPv6 address (with `::` and an optional embedded IPv4 tail) into 16 bytes. */
export function ipv6Bytes(ip: string): Uint8Array | undefined {
  if (!ip.includes(":") || ip.includes("%")) return undefined;
  let head = ip;
  let tail4: Uint8Array | undefined;
  const lastColon = ip.lastIndexOf(":");
  if (ip.slice(lastColon + 1).includes(".")) {
    tail4 = ipv4Bytes(ip.slice(lastColon + 1));
    if (!tail4) return undefined;
    head = ip.slice(0, lastColon + 1) + "0:0";
  }
  const halves = head.split("::");
  if (halves.length > 2) return undefined;
  const parse = (s: string) => (s === "" ? [] : s.split(":"));
  const left = parse(halves[0]);
  const right = halves.length === 2 ? parse(halves[1]) : [];
  const missing = 8 - left.length - right.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  const groups = [...left, ...Array(halves.length === 2 ? missing : 0).fill("0"), ...right];
  const out = new Uint8Array(16);
  for (let i = 0; i < 8; i++) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(groups[i])) return undefined;
    const v = parseInt(groups[i], 16);
    out[i * 2] = v >> 8;
    out[i * 2 + 1] = v & 0xff;
  }
  if (tail4) out.set(tail4, 12);
  return out;
}
