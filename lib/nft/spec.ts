/**
 * The capture spec: what one pod's `inet aether` table does, as plain data. {@link normalizeSpec}
 * validates a spec and puts it in its one canonical form (addresses as nft lists them, sorted,
 * each once), which the builder renders and the parser of a listed table gives back, so "is the
 * table what we want" is {@link sameSpec} of the two.
 * @module
 */
import { compareIp, type IpAddress, parseIp } from "./addr.ts";

/** One mesh Service VIP and service port whose TCP connections are captured. */
export interface VipPort {
  /** An IPv4 or IPv6 cluster IP. */
  address: string;
  port: number;
}

/**
 * One mesh Service VIP and UDP service port whose datagrams go to `to` on the pod's loopback (the
 * node proxy's UDP listener for that Service port: UDP carries no original destination, so each
 * UDP Service port has a local port of its own).
 */
export interface UdpRedirect {
  address: string;
  port: number;
  to: number;
}

/** Redirection of DNS queries (UDP and TCP port 53) sent to the cluster DNS servers. */
export interface DnsRedirect {
  /** The cluster DNS server IPs (IPv4 and/or IPv6) whose queries are redirected. */
  servers: string[];
  /**
   * Where they go: the node's addresses (the agent's DNS responder), at most one per family. A
   * server is sent to the address of its own family; a server whose family has none is an error.
   */
  addresses: string[];
  /** The responder's port (the agent's 18054). */
  port: number;
}

/** What one pod netns's table does. */
export interface CaptureSpec {
  /** TCP to these VIP:ports is redirected to `capturePort` on the pod's loopback. */
  vips: VipPort[];
  /** The node proxy's capture listener port in the pod netns (15001). */
  capturePort: number;
  /** When set (and it has servers), DNS to the cluster DNS servers goes to the agent. */
  dns?: DnsRedirect;
  /** UDP to these VIP:ports goes to their local ports; absent or empty: UDP is not captured. */
  udp?: UdpRedirect[];
}

/** A spec that cannot be rendered; the message says what is wrong with it. */
export class NftSpecError extends Error {
  override name = "NftSpecError";
}

function address(what: string, s: string): IpAddress {
  const ip = typeof s === "string" ? parseIp(s) : undefined;
  if (!ip) {
    throw new NftSpecError(`capture spec: ${what} ${JSON.stringify(s)} is not an IP address`);
  }
  return ip;
}

function port(what: string, p: number): number {
  if (!Number.isInteger(p) || p < 1 || p > 65535) {
    throw new NftSpecError(`capture spec: ${what} ${JSON.stringify(p)} is not a port (1–65535)`);
  }
  return p;
}

/** Sorted by address (IPv4 first), each once. */
function uniqueIps(ips: IpAddress[]): IpAddress[] {
  const sorted = [...ips].sort(compareIp);
  return sorted.filter((ip, i) => i === 0 || ip.text !== sorted[i - 1].text);
}

/**
 * The canonical form of `spec`: VIP:ports sorted (IPv4 first, by address bytes, then port) and
 * each once, addresses in nft's text, DNS servers sorted and each once, a DNS redirect without
 * servers dropped, DNS addresses only for the families that have servers. Throws
 * {@link NftSpecError} for an address that is not an IP, a port out of range, two DNS addresses
 * of one family, or a DNS server whose family has no address.
 */
export function normalizeSpec(spec: CaptureSpec): CaptureSpec {
  const vips = spec.vips.map((v) => ({
    ip: address("VIP", v.address),
    port: port(`port of VIP ${v.address}`, v.port),
  }));
  vips.sort((a, b) => compareIp(a.ip, b.ip) || a.port - b.port);
  const out: CaptureSpec = {
    vips: vips
      .filter((v, i) => i === 0 || v.ip.text !== vips[i - 1].ip.text || v.port !== vips[i - 1].port)
      .map((v) => ({ address: v.ip.text, port: v.port })),
    capturePort: port("capture port", spec.capturePort),
  };
  const udp = normalizeUdp(spec.udp ?? []);
  if (udp.length > 0) out.udp = udp;
  const dns = spec.dns;
  if (!dns || dns.servers.length === 0) return out;
  const servers = uniqueIps(dns.servers.map((s) => address("DNS server", s)));
  const to = uniqueIps(dns.addresses.map((s) => address("DNS redirect address", s)));
  for (const family of [4, 6] as const) {
    if (to.filter((a) => a.family === family).length > 1) {
      throw new NftSpecError(
        `capture spec: DNS redirect addresses ${
          to.map((a) => a.text).join(", ")
        } have two of IPv${family}; give at most one per family`,
      );
    }
    const server = servers.find((s) => s.family === family);
    if (server && !to.some((a) => a.family === family)) {
      throw new NftSpecError(
        `capture spec: DNS server ${server.text} is IPv${family} but no DNS redirect address is;` +
          ` add the node's IPv${family} address or drop the server`,
      );
    }
  }
  out.dns = {
    servers: servers.map((s) => s.text),
    addresses: to.filter((a) => servers.some((s) => s.family === a.family)).map((a) => a.text),
    port: port("DNS redirect port", dns.port),
  };
  return out;
}

/** UDP redirects sorted like VIPs (IPv4 first, by address bytes, then port), each VIP:port once. */
function normalizeUdp(udp: UdpRedirect[]): UdpRedirect[] {
  const all = udp.map((u) => ({
    ip: address("UDP VIP", u.address),
    port: port(`UDP port of VIP ${u.address}`, u.port),
    to: port(`local port of UDP VIP ${u.address}:${u.port}`, u.to),
  }));
  all.sort((a, b) => compareIp(a.ip, b.ip) || a.port - b.port);
  return all
    .filter((u, i) => i === 0 || u.ip.text !== all[i - 1].ip.text || u.port !== all[i - 1].port)
    .map((u) => ({ address: u.ip.text, port: u.port, to: u.to }));
}

/** Whether two canonical specs (as {@link normalizeSpec} gives them) are the same. */
export function sameSpec(a: CaptureSpec, b: CaptureSpec): boolean {
  if (a.capturePort !== b.capturePort || a.vips.length !== b.vips.length) return false;
  if (a.vips.some((v, i) => v.address !== b.vips[i].address || v.port !== b.vips[i].port)) {
    return false;
  }
  const au = a.udp ?? [], bu = b.udp ?? [];
  if (
    au.length !== bu.length ||
    au.some((u, i) => u.address !== bu[i].address || u.port !== bu[i].port || u.to !== bu[i].to)
  ) {
    return false;
  }
  if (!a.dns || !b.dns) return !a.dns && !b.dns;
  const same = (x: string[], y: string[]) => x.length === y.length && x.every((s, i) => s === y[i]);
  return a.dns.port === b.dns.port && same(a.dns.servers, b.dns.servers) &&
    same(a.dns.addresses, b.dns.addresses);
}

/** The family of a canonical address (IPv6 text always has a colon). */
export function familyOf(address: string): 4 | 6 {
  return address.includes(":") ? 6 : 4;
}
