/**
 * The capture spec of a node's pods from the MeshIR: every VIP of every captured mesh Service
 * with each of its TCP service ports, the node proxy's capture port, the UDP service ports with a
 * UDPRoute with their local ports (lib/ir/mesh_udp.ts), and the node's DNS redirect when there is
 * one. Pure; the same for every pod of the node today.
 * @module
 */
import { type MeshIR, type MeshService, udpTargets } from "../../lib/ir/mod.ts";
import { type CaptureSpec, type DnsRedirect, normalizeSpec, parseIp } from "../../lib/nft/mod.ts";

/** The node proxy's capture listener port in each pod netns. */
export const DEFAULT_CAPTURE_PORT = 15001;

/** What the spec is made of besides the MeshIR. */
export interface MeshSpecOptions {
  /** Default {@link DEFAULT_CAPTURE_PORT}. */
  capturePort?: number;
  /** DNS to the cluster DNS servers goes to the agent's responder. */
  dns?: DnsRedirect;
  /**
   * Services (`<namespace>/<name>`, e.g. `kube-system/kube-dns`) whose cluster IPs are cluster DNS
   * servers too, beside `dns.servers`: found in the MeshIR, so the table follows the Service.
   */
  dnsServices?: readonly string[];
  /** Which mesh Services are captured; default every one (a Service without VIP adds none). */
  captured?: (service: MeshService) => boolean;
}

/**
 * The canonical capture spec for `mesh` (VIPs that are not IP addresses are left out). Throws
 * NftSpecError when the options are invalid (a DNS server with no address of its family).
 */
export function meshCaptureSpec(mesh: MeshIR, options: MeshSpecOptions = {}): CaptureSpec {
  const vips = [];
  for (const svc of mesh.services) {
    if (options.captured && !options.captured(svc)) continue;
    for (const address of svc.vips) {
      if (!parseIp(address)) continue;
      // TCP ports only (a UDP or SCTP port has `protocol`), as the capture listener serves.
      for (const p of svc.ports) if (!p.protocol) vips.push({ address, port: p.port });
    }
  }
  const udp = [];
  for (const t of udpTargets(mesh)) {
    if (options.captured && !options.captured(t.service)) continue;
    for (const address of t.service.vips) {
      if (parseIp(address)) udp.push({ address, port: t.port.port, to: t.localPort });
    }
  }
  const dns = options.dns && withServiceServers(options.dns, mesh, options.dnsServices ?? []);
  return normalizeSpec({
    vips,
    capturePort: options.capturePort ?? DEFAULT_CAPTURE_PORT,
    ...(dns ? { dns } : {}),
    ...(udp.length > 0 ? { udp } : {}),
  });
}

/** `dns` with the cluster IPs of the named Services added to its servers. */
function withServiceServers(
  dns: DnsRedirect,
  mesh: MeshIR,
  services: readonly string[],
): DnsRedirect {
  if (services.length === 0) return dns;
  const wanted = new Set(services);
  const vips = mesh.services.filter((s) => wanted.has(`${s.namespace}/${s.name}`))
    .flatMap((s) => s.vips.filter((v) => parseIp(v) !== undefined));
  return { ...dns, servers: [...dns.servers, ...vips] };
}
