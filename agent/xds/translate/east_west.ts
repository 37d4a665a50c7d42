/**
 * The east-west gateway's Envoy configuration (pure): its cluster's own registry records
 * (`eps/<ns>/<svc>/<pod>` and `exports/<ns>/<svc>`) → one listener that reads the SNI of each
 * incoming TLS connection (tls_inspector) and, for each exported Service port's clusterset SNI
 * `<port>.<svc>.<ns>.svc.clusterset.local` (and its clusterset VIP Service's mesh SNI), passes
 * the connection as it is (tcp_proxy, never
 * opened) to that Service's ready pods at `podIP:15008`, where each pod's inbound terminates the
 * caller's mTLS. A connection with any other SNI (or none) matches no chain and is closed; with
 * no exported port there is no listener at all.
 * @module
 */
import {
  clustersetSni,
  parseEndpointRecord,
  parseExportRecord,
  vipServiceName,
} from "../../../lib/mcs/mod.ts";
import { MESH_MTLS_PORT } from "./mtls.ts";
import type { EnvoyResources as Resources, NamedResource } from "./types.ts";
import { adsConfigSource, any, duration, statName } from "./util.ts";
import { DiscoveryType } from "./enums.ts";

const TLS_INSPECTOR = "envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector";
const TCP_PROXY = "envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy";

/** The name of the gateway's one listener. */
export const EAST_WEST_LISTENER = "east-west";

/** Options of {@link translateEastWest}. */
export interface EastWestOptions {
  /** Where the listener binds. */
  address: string;
  port: number;
  /**
   * The clusterset's mesh domain: a chain also takes the mesh SNI of the Service's clusterset VIP
   * Service (`<port>.<mcs-hash>.<meshDomain>`), which callers send when they dial the
   * `clusterset.local` name's VIP (their capture's cluster is that Service's).
   */
  meshDomain?: string;
  /** Connect timeout to a pod (default 5 s). */
  connectTimeoutMs?: number;
}

/** What {@link translateEastWest} read. */
export interface EastWestTranslation {
  resources: Resources;
  /** SNI → the pod addresses it passes to (sorted), for /status. */
  routes: Record<string, string[]>;
  /** Records that did not parse (another writer's garbage, a newer version). */
  skipped: number;
}

/**
 * The gateway's resources for one origin's entries (key inside the origin → value). A port is
 * named by its Service port number: the record's `servicePort`, else the export's port of the
 * same name and protocol; TCP only.
 */
export function translateEastWest(
  entries: ReadonlyMap<string, string>,
  opts: EastWestOptions,
): EastWestTranslation {
  let skipped = 0;
  const exportPorts = new Map<string, { name?: string; protocol: string; port: number }[]>();
  for (const [key, value] of entries) {
    if (!key.startsWith("exports/")) continue;
    const r = parseExportRecord(value);
    if (!r) skipped++;
    else exportPorts.set(`${r.namespace}/${r.name}`, r.ports);
  }
  const pods = new Map<string, Set<string>>();
  const vipSnis = new Map<string, string>();
  for (const [key, value] of entries) {
    if (!key.startsWith("eps/")) continue;
    const r = parseEndpointRecord(value);
    if (!r) {
      skipped++;
      continue;
    }
    for (const p of r.ports) {
      if (p.protocol !== "TCP") continue;
      const servicePort = p.servicePort ??
        exportPorts.get(`${r.namespace}/${r.service}`)?.find((e) =>
          (e.name ?? "") === p.name && e.protocol === p.protocol
        )?.port;
      if (servicePort === undefined) continue;
      const sni = clustersetSni(r.namespace, r.service, servicePort);
      const set = pods.get(sni) ?? new Set<string>();
      set.add(r.ip);
      pods.set(sni, set);
      if (opts.meshDomain) {
        vipSnis.set(
          sni,
          `${servicePort}.${vipServiceName(r.namespace, r.service)}.${opts.meshDomain}`,
        );
      }
    }
  }
  const snis = [...pods.keys()].sort();
  const routes = Object.fromEntries(snis.map((s) => [s, [...pods.get(s)!].sort()]));
  const timeout = duration(opts.connectTimeoutMs ?? 5000);
  const clusters: NamedResource[] = snis.map((name) => ({
    name,
    resource: {
      name,
      type: DiscoveryType.EDS,
      eds_cluster_config: { eds_config: adsConfigSource() },
      connect_timeout: timeout,
    },
  }));
  const endpoints: NamedResource[] = snis.map((name) => ({
    name,
    resource: {
      cluster_name: name,
      endpoints: [{
        lb_endpoints: routes[name].map((address) => ({
          endpoint: { address: { socket_address: { address, port_value: MESH_MTLS_PORT } } },
        })),
      }],
    },
  }));
  const listener: NamedResource = {
    name: EAST_WEST_LISTENER,
    resource: {
      name: EAST_WEST_LISTENER,
      address: { socket_address: { address: opts.address, port_value: opts.port } },
      listener_filters: [{
        name: "envoy.filters.listener.tls_inspector",
        typed_config: any(TLS_INSPECTOR),
      }],
      filter_chains: snis.map((sni) => ({
        name: sni,
        filter_chain_match: { server_names: [sni, ...vipSnis.has(sni) ? [vipSnis.get(sni)!] : []] },
        filters: [{
          name: "envoy.filters.network.tcp_proxy",
          typed_config: any(TCP_PROXY, { stat_prefix: `east_west_${statName(sni)}`, cluster: sni }),
        }],
      })),
    },
  };
  return {
    // Envoy takes no listener without a chain: with nothing exported, nothing listens.
    resources: {
      listeners: snis.length ? [listener] : [],
      routes: [],
      clusters,
      endpoints,
      secrets: [],
    },
    routes,
    skipped,
  };
}
