/**
 * ServiceImport backends (multicluster.x-k8s.io, GEP-1748): a backendRef to a ServiceImport means
 * the clusterset's endpoints of that service — every exporting cluster's, from the registry
 * (ClusterSetEndpoints objects), this cluster's first (priority 0) and the others' as failover.
 * Each ServiceImport port is its own cluster, so a port only one cluster exports reaches only
 * that cluster's endpoints. Pure.
 * @module
 */
import type { ClusterSetEndpointsSpec, ServicePort } from "./core_types.ts";
import type { IREndpoint } from "../ir/mod.ts";
import { type GatewayedEndpoint, gatewayEndpoints, parseGatewayAddress } from "../mcs/mod.ts";

/** The DNS zone of clusterset names (KEP-1645). */
export const CLUSTERSET_ZONE = "svc.clusterset.local";

/** The cluster of one port of a ServiceImport: `<name>.<ns>.svc.clusterset.local:<port>`. */
export function importClusterName(namespace: string, name: string, port: number): string {
  return `${name}.${namespace}.${CLUSTERSET_ZONE}:${port}`;
}

/**
 * The registry endpoints serving `port` of an import (matched by port name and protocol, and by
 * number where the record carries its cluster's Service port: a cluster exporting the same name
 * with another number does not serve this port — KEP-1645's oldest export wins, the upstream
 * StrictPortConflict spec), with their target port, zone, identity and failover priority; sorted
 * by address then port. Endpoints of another cluster behind its east-west gateway follow, one
 * per gateway and identity, dialled at the gateway (lib/mcs/east_west.ts). A UDP port's endpoints
 * carry no identity (datagrams are sent in plaintext to the pod's port) and none behind gateways.
 */
export function importEndpoints(
  spec: ClusterSetEndpointsSpec | undefined,
  port: ServicePort,
): IREndpoint[] {
  const name = port.name ?? "", protocol = port.protocol ?? "TCP";
  const out = new Map<string, IREndpoint>();
  const gatewayed: GatewayedEndpoint[] = [];
  for (const e of spec?.endpoints ?? []) {
    const p = e.ports.find((p) =>
      p.name === name && p.protocol === protocol &&
      (p.servicePort === undefined || p.servicePort === port.port)
    );
    if (!p) continue;
    if (protocol === "UDP") {
      // Datagrams go to the pod's own port in plaintext (no mTLS tunnel carries them, and an
      // east-west gateway routes TLS by SNI only): no identity, nothing behind a gateway.
      if (e.gateway) continue;
      out.set(`${e.address}|${p.port}`, {
        address: e.address,
        port: p.port,
        ...(e.zone ? { zone: e.zone } : {}),
        ...(e.priority ? { priority: e.priority } : {}),
      });
      continue;
    }
    if (e.gateway) {
      const at = parseGatewayAddress(e.gateway);
      if (at) {
        gatewayed.push({
          gateway: at,
          ...(e.identity ? { identity: e.identity } : {}),
          ...(e.priority ? { priority: e.priority } : {}),
        });
        continue;
      }
    }
    out.set(`${e.address}|${p.port}`, {
      address: e.address,
      port: p.port,
      ...(e.zone ? { zone: e.zone } : {}),
      ...(e.identity ? { identity: e.identity } : {}),
      ...(e.priority ? { priority: e.priority } : {}),
    });
  }
  return [
    ...[...out.values()].sort((a, b) =>
      a.address < b.address ? -1 : a.address > b.address ? 1 : a.port - b.port
    ),
    ...gatewayEndpoints(gatewayed),
  ];
}
