/**
 * The east-west gateway role (`agent east-west-gateway`): mirrors the registry, takes its own
 * cluster's origin, and serves {@link translateEastWest}'s listener to its own Envoy through the
 * xDS server and Envoy supervision every role shares (agent/runtime.ts); `/readyz` is Envoy
 * having ACKed the current configuration, `/metrics` has the registry's gauges.
 * @module
 */
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import {
  clusterId,
  EtcdKv,
  mirrorMetrics,
  type Origin,
  originId,
  type RegistryKv,
  RegistryMirror,
} from "../../lib/registry/mod.ts";
import { Snapshot, SnapshotCache } from "../xds/cache/mod.ts";
import { type Runtime, startRuntime } from "../runtime.ts";
import { splitHostPort } from "../admin/mod.ts";
import { translateEastWest } from "../xds/translate/mod.ts";

/** Options of {@link runEastWestGateway}. */
export interface EastWestGatewayOptions {
  /** The registry's etcd client URL (or `kv`). */
  registryUrl?: string;
  kv?: RegistryKv;
  origin: Origin;
  /** Where the gateway's Envoy listens for other clusters' callers (`host:port`). */
  listen: string;
  /** The clusterset's mesh domain (the VIP Services' mesh SNIs are passed through too). */
  meshDomain?: string;
  adminAddress: string;
  xdsAddress: string;
  nodeId: string;
  /** Envoy binary path, "auto" or "none". */
  envoy: string;
  envoyLogLevel?: string;
  stateDir?: string;
  logger?: Logger;
}

/** A running east-west gateway. */
export interface EastWestGateway extends Runtime {
  metrics: Registry;
  /** SNI → pod addresses now served. */
  routes(): Record<string, string[]>;
}

/** Starts the gateway: registry mirror first, then the runtime, then Envoy. */
export async function runEastWestGateway(o: EastWestGatewayOptions): Promise<EastWestGateway> {
  const logger = o.logger ?? new Logger("east-west");
  const metrics = new Registry();
  const cache = new SnapshotCache();
  const listen = splitHostPort(o.listen);
  const own = originId(o.origin);
  const skippedGauge = metrics.gauge(
    "aether_east_west_malformed_records",
    "This cluster's registry records the east-west gateway could not read.",
  );
  const snisGauge = metrics.gauge(
    "aether_east_west_service_ports",
    "Exported Service ports (clusterset SNIs) the east-west gateway passes through.",
  );
  const view = { routes: {} as Record<string, string[]> };
  const publish = () => {
    const entries = mirror.origin(own)?.entries ?? new Map<string, string>();
    const t = translateEastWest(entries, {
      address: listen.hostname,
      port: listen.port,
      ...(o.meshDomain ? { meshDomain: o.meshDomain } : {}),
    });
    view.routes = t.routes;
    skippedGauge.set(t.skipped);
    snisGauge.set(Object.keys(t.routes).length);
    cache.setSnapshot(
      o.nodeId,
      Snapshot.fromResources(
        t.resources,
        (typeUrl, name, error) =>
          logger.error("resource left out", { typeUrl, name, error: error.message }),
      ),
    );
  };
  const mirror = new RegistryMirror({
    kv: o.kv ?? new EtcdKv({ url: o.registryUrl! }),
    logger: logger.child("registry"),
    metrics: mirrorMetrics(metrics),
    onChange: (changed) => {
      if (changed.has(own)) publish();
    },
  });
  const runtime = await startRuntime({
    logger,
    metrics,
    cache,
    xdsAddress: o.xdsAddress,
    adminAddress: o.adminAddress,
    nodeId: o.nodeId,
    envoyCluster: "aether-east-west",
    envoy: o.envoy,
    envoyLogLevel: o.envoyLogLevel,
    stateDir: o.stateDir,
    dnsAddress: "none",
    meshDomain: "",
    status: () => ({
      eastWest: { cluster: clusterId(o.origin), listen: o.listen, routes: view.routes },
    }),
  });
  try {
    await mirror.start();
    publish();
    await runtime.startEnvoy();
  } catch (e) {
    mirror.stop();
    await runtime.close();
    throw e;
  }
  logger.info("east-west gateway serving", { listen: o.listen, cluster: clusterId(o.origin) });
  return {
    ...runtime,
    metrics,
    routes: () => view.routes,
    close: async (c) => {
      mirror.stop();
      await runtime.close(c);
    },
  };
}
