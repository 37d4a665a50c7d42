/**
 * East-west gateway mode (pure): clusters with no pod-network routes between them reach each
 * other's pods through each cluster's east-west gateway. The registrar publishes the gateway's
 * address on every endpoint record (`gateway: "<ip>:<port>"`); an importer dials an endpoint of
 * another cluster that has one at the gateway instead of `podIP:15008`, with the same SNI
 * (`<port>.<svc>.<ns>.svc.clusterset.local`) and the same SPIFFE ID check: the gateway never
 * terminates TLS, it only picks the Service by SNI and passes the connection to one of its pods.
 *
 * Endpoints behind one gateway with one identity are one endpoint to the caller (weighted by how
 * many pods they are): the gateway, not the caller, picks the pod. So the pods of one exported
 * Service behind a gateway must share a ServiceAccount for every one of them to be reachable
 * under one identity check; pods with another identity are separate endpoints, each verified.
 * @module
 */
import type { IREndpoint } from "../ir/mod.ts";

/**
 * The SNI a caller in another cluster sends for port `port` of an exported Service — the pod's
 * inbound and the gateway pick the Service port by it: `<port>.<svc>.<ns>.svc.clusterset.local`
 * (the import cluster's name with its port in front, as mesh SNIs are).
 */
export function clustersetSni(namespace: string, service: string, port: number): string {
  return `${port}.${service}.${namespace}.svc.clusterset.local`;
}

/** An `<ip>:<port>` (IPv6 as `[ip]:port`) read as an address and port, else undefined. */
export function parseGatewayAddress(s: string): { address: string; port: number } | undefined {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|(\d{1,3}(?:\.\d{1,3}){3})):(\d{1,5})$/.exec(s);
  if (!m) return undefined;
  const address = m[1] ?? m[2];
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return undefined;
  if (m[2] && m[2].split(".").some((o) => Number(o) > 255)) return undefined;
  if (m[1] && !m[1].includes(":")) return undefined;
  return { address, port };
}

/** Why `s` is no gateway address (for flag errors), or undefined when it is one. */
export function gatewayAddressProblem(s: string): string | undefined {
  return parseGatewayAddress(s)
    ? undefined
    : `"${s}" is not <ip>:<port> (the gateway's reachable address; IPv6 as [ip]:port)`;
}

/** One endpoint of another cluster behind `gateway` (as the registry has it). */
export interface GatewayedEndpoint {
  gateway: { address: string; port: number };
  identity?: string;
  priority?: number;
}

/**
 * The endpoints of other clusters behind gateways, as the caller dials them: one per gateway,
 * identity and priority, at the gateway's address (`dialAt`), weighted by the number of pods;
 * sorted by address, port, then identity.
 */
export function gatewayEndpoints(list: readonly GatewayedEndpoint[]): IREndpoint[] {
  const out = new Map<string, IREndpoint>();
  for (const e of list) {
    const { address, port } = e.gateway;
    const key = `${address}|${port}|${e.identity ?? ""}|${e.priority ?? 0}`;
    const seen = out.get(key);
    if (seen) {
      seen.weight = (seen.weight ?? 1) + 1;
      continue;
    }
    out.set(key, {
      address,
      port,
      ...(e.identity ? { identity: e.identity } : {}),
      ...(e.priority ? { priority: e.priority } : {}),
      dialAt: { address, port },
    });
  }
  return [...out.values()].sort((a, b) =>
    a.address < b.address
      ? -1
      : a.address > b.address
      ? 1
      : a.port - b.port || ((a.identity ?? "") < (b.identity ?? "") ? -1 : 1)
  );
}
