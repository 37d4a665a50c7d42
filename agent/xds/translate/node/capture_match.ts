/**
 * What the capture listener serves and how it picks a filter chain, pure. Every TCP port of
 * every mesh service with a cluster IP is a capture target; its protocol comes from the Service
 * port's `appProtocol`: `http` → the HTTP chain, `kubernetes.io/h2c`, `grpc`, `h2c`, `http2` →
 * the same HTTP chain (the connection manager's codec detects h2c prior knowledge), any other value
 * → the TCP chain (an opaque protocol: WebSocket and TLS included), none at all → sniffed by the
 * inspectors: `'h2c'`, `'http/1.1'`, `'http/1.0'` over raw TCP → HTTP, anything else (TLS, a
 * protocol whose server speaks first, a silent client past the detection timeout) → TCP.
 *
 * The filter chain matcher (xds unified matcher) is a tree, never a scan of chains: destination
 * IP (exact map of the VIPs) → destination port (exact map) → for sniffed ports
 * transport protocol (`raw_buffer`) and application protocol (exact map) → chain name; every
 * level's no-match is the pass-through chain (or a sniffed port's TCP chain). The inspectors run
 * only for the port numbers some service sniffs (`filter_disabled` elsewhere), so a known
 * protocol, and a pass-through destination, never waits for a first byte.
 *
 * Mesh L4 routes make a port's protocol: a TCPRoute → TCP; a TLSRoute → TLS, whose matcher level
 * below the port is the connection's SNI (`tls_inspector` on those ports too): the caller's
 * TLSRoutes by name (exact names in a map, then `*.` wildcards by suffix, longest first), and a
 * name no route holds → the port's TCP chain (its own endpoints).
 * @module
 */
import {
  hasTcpRoutes,
  hasTlsRoutes,
  type MeshIR,
  type MeshService,
  type MeshServicePort,
} from "../../../../lib/ir/mod.ts";
import { any } from "../util.ts";

/**
 * How the capture listener treats a service port: HTTP routes, opaque TCP, sniffed, or TLS by SNI
 * (a port with TLSRoutes).
 */
export type CaptureProtocol = "http" | "tcp" | "sniff" | "tls";

/** appProtocol values (lower case) whose traffic the HTTP chain serves. */
const HTTP_APP_PROTOCOLS: readonly string[] = Object.freeze([
  "http",
  "kubernetes.io/h2c",
  "grpc",
  "h2c",
  "http2",
]);

/** The protocol of a service port, from its appProtocol (case-insensitive); sniff without one. */
export function captureProtocol(port: Pick<MeshServicePort, "appProtocol">): CaptureProtocol {
  if (!port.appProtocol) return "sniff";
  return HTTP_APP_PROTOCOLS.includes(port.appProtocol.toLowerCase()) ? "http" : "tcp";
}

/** One captured service port. */
export interface CaptureTarget {
  service: MeshService;
  port: MeshServicePort;
  protocol: CaptureProtocol;
}

/**
 * Every (VIP service, TCP port) the capture listener serves, by authority then port order:
 * services without a cluster IP (headless, ExternalName) and non-TCP ports have none; of two
 * ports with one number (TCP and UDP 53) the TCP one.
 */
export function captureTargets(mesh: Pick<MeshIR, "services">): CaptureTarget[] {
  const out: CaptureTarget[] = [];
  for (const service of mesh.services) {
    if (service.vips.length === 0) continue;
    const seen = new Set<number>();
    for (const port of service.ports) {
      if (port.protocol || seen.has(port.port)) continue;
      seen.add(port.port);
      // A TCPRoute on the port says it carries TCP, a TLSRoute TLS: no sniffing for HTTP.
      const protocol = hasTcpRoutes(port)
        ? "tcp"
        : hasTlsRoutes(port)
        ? "tls"
        : captureProtocol(port);
      out.push({ service, port, protocol });
    }
  }
  return out;
}

/** The HTTP chain name of a service port: `<cluster>|http`. */
export function httpChainName(port: Pick<MeshServicePort, "cluster">): string {
  return `${port.cluster}|http`;
}

/** The TCP chain name of a service port: `<cluster>|tcp`. */
export function tcpChainName(port: Pick<MeshServicePort, "cluster">): string {
  return `${port.cluster}|tcp`;
}

/** The chain name of the `index`th TLSRoute (of a caller's) on a service port. */
export function tlsChainName(port: Pick<MeshServicePort, "cluster">, index: number): string {
  return `${port.cluster}|tls|${index}`;
}

/**
 * The chain names a target needs besides its TLSRoutes': HTTP, TCP (a TLS port's names no route
 * holds go there too), or (sniffed) both.
 */
export function targetChains(t: CaptureTarget): { http?: string; tcp?: string } {
  if (t.protocol === "http") return { http: httpChainName(t.port) };
  if (t.protocol === "tcp" || t.protocol === "tls") return { tcp: tcpChainName(t.port) };
  return { http: httpChainName(t.port), tcp: tcpChainName(t.port) };
}

/** The SNI names a caller's TLSRoutes hold on a port, `names[i]` those of route `i`. */
export type TlsNames = (t: CaptureTarget) => readonly (readonly string[])[];

type Obj = Record<string, unknown>;

const INPUTS = "envoy.extensions.matching.common_inputs.network.v3";

function input(name: string, type: string): Obj {
  return { name, typed_config: any(`${INPUTS}.${type}`) };
}

/** A matcher action naming a filter chain. */
function chain(name: string): Obj {
  return { action: { name, typed_config: any("google.protobuf.StringValue", { value: name }) } };
}

/** An exact-map matcher on `inputType` with `onNoMatch`. */
function exactMap(name: string, inputType: string, map: Record<string, Obj>, onNoMatch: Obj): Obj {
  return {
    matcher_tree: { input: input(name, inputType), exact_match_map: { map } },
    on_no_match: onNoMatch,
  };
}

/** A sniffed port: raw TCP whose first bytes are HTTP/1.x or h2c → HTTP; else TCP. */
function sniffed(http: string, tcp: string): Obj {
  const byAlpn = exactMap("application_protocol", "ApplicationProtocolInput", {
    "'h2c'": chain(http),
    "'http/1.1'": chain(http),
    "'http/1.0'": chain(http),
  }, chain(tcp));
  // TLS can carry ALPN `http/1.1`, which is not plaintext HTTP: only raw_buffer is sniffed.
  return {
    matcher: exactMap("transport_protocol", "TransportProtocolInput", {
      raw_buffer: { matcher: byAlpn },
    }, chain(tcp)),
  };
}

/**
 * A TLS port: by SNI to the caller's TLSRoutes (exact names by map, then wildcards by suffix,
 * longest first; an earlier route keeps a name), anything else to the port's TCP chain.
 */
function bySni(t: CaptureTarget, names: readonly (readonly string[])[], tcp: string): Obj {
  const exact: Record<string, Obj> = {};
  const wild: { suffix: string; chain: string }[] = [];
  names.forEach((hostnames, i) => {
    for (const h of hostnames) {
      if (h.startsWith("*.")) wild.push({ suffix: h.slice(1), chain: tlsChainName(t.port, i) });
      else exact[h.toLowerCase()] ??= chain(tlsChainName(t.port, i));
    }
  });
  wild.sort((a, b) => b.suffix.length - a.suffix.length);
  const sni = input("server_name", "ServerNameInput");
  const wildcards: Obj = wild.length === 0 ? chain(tcp) : {
    matcher: {
      matcher_list: {
        matchers: wild.map((w) => ({
          predicate: {
            single_predicate: { input: sni, value_match: { suffix: w.suffix.toLowerCase() } },
          },
          on_match: chain(w.chain),
        })),
      },
      on_no_match: chain(tcp),
    },
  };
  return { matcher: exactMap("server_name", "ServerNameInput", exact, wildcards) };
}

/**
 * The text Envoy's DestinationIPInput gives for `ip`: IPv6 compressed and lower case (as
 * inet_ntop writes it), IPv4 as it is.
 */
export function canonicalIp(ip: string): string {
  return ip.includes(":") ? new URL(`http://[${ip}]`).hostname.slice(1, -1) : ip;
}

/**
 * The listener's `filter_chain_matcher` over `targets` (sorted, one service's ports adjacent):
 * an exact map of the VIPs (a hash lookup; the xds `IPMatcher` trie would do as well, but Envoy
 * 1.40 logs a work-in-progress warning for each of its ranges at every listener update, tens of
 * thousands of lines for a node of a large mesh). What matches no target goes to `passthrough`.
 */
export function captureMatcher(
  targets: readonly CaptureTarget[],
  passthrough: string,
  tlsNames: TlsNames = () => [],
): Obj | undefined {
  const byService = new Map<MeshService, CaptureTarget[]>();
  for (const t of targets) byService.set(t.service, [...byService.get(t.service) ?? [], t]);
  const vips: Record<string, Obj> = {};
  for (const [service, ts] of byService) {
    const ports: Record<string, Obj> = {};
    for (const t of ts) {
      const { http, tcp } = targetChains(t);
      ports[String(t.port.port)] = t.protocol === "tls"
        ? bySni(t, tlsNames(t), tcp!)
        : http && tcp
        ? sniffed(http, tcp)
        : chain((http ?? tcp)!);
    }
    for (const vip of service.vips.map(canonicalIp)) {
      // A VIP is one Service's; should two claim one, the first (by authority) keeps it.
      vips[vip] ??= {
        matcher: exactMap("destination_port", "DestinationPortInput", ports, chain(passthrough)),
      };
    }
  }
  // No VIP (a mesh of UDP ports only): no matcher, the pass-through chain is the only chain.
  if (Object.keys(vips).length === 0) return undefined;
  return exactMap("destination_ip", "DestinationIPInput", vips, chain(passthrough));
}

/** The port numbers some target sniffs (or, with `tls`, reads the SNI of), sorted, each once. */
export function sniffedPorts(targets: readonly CaptureTarget[], tls = false): number[] {
  const wanted = (t: CaptureTarget) => t.protocol === "sniff" || (tls && t.protocol === "tls");
  const ports = new Set(targets.filter(wanted).map((t) => t.port.port));
  return [...ports].sort((a, b) => a - b);
}

/**
 * The inspectors' `filter_disabled`: every destination port but the sniffed ones (contiguous
 * runs as one range). Undefined when no port is sniffed (then the listener has no inspector).
 */
export function inspectorsDisabled(ports: readonly number[]): Obj | undefined {
  if (ports.length === 0) return undefined;
  const runs: Obj[] = [];
  for (let i = 0; i < ports.length;) {
    let end = i;
    while (end + 1 < ports.length && ports[end + 1] === ports[end] + 1) end++;
    runs.push({ destination_port_range: { start: ports[i], end: ports[end] + 1 } });
    i = end + 1;
  }
  return { not_match: runs.length === 1 ? runs[0] : { or_match: { rules: runs } } };
}
