/**
 * Standalone mode: a bare-metal agent that reads Gateway API YAML from a folder or file, serves
 * xDS to its Envoy (optionally started as a child process), and exposes the admin endpoints.
 * This is a contract (docs/standalone.md): flags and endpoints stay stable.
 * @module
 */
import { join } from "node:path";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { Engine } from "../../lib/engine/mod.ts";
import { configSource } from "../config_source.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { EdgeSnapshots } from "../xds/edge_snapshots.ts";
import { meshRecordsSink } from "../dns/mod.ts";
import { meshDnsResponder, type Runtime, startRuntime } from "../runtime.ts";
import { startEdgeIdentity } from "../identity/mod.ts";
import { standaloneDefaults } from "./defaults.ts";
import type { StandaloneOptions } from "./options.ts";

export { standaloneDefaults };
export type { StandaloneOptions };

/** A running standalone agent. */
export interface StandaloneAgent extends Runtime {
  engine: Engine;
  /** The edge's xDS sink (its last served IR). */
  snapshots: EdgeSnapshots;
  metrics: Registry;
}

/**
 * Starts the standalone agent: the source, the engine and its sinks (the edge's xDS snapshots,
 * the mesh DNS records), then the runtime that serves them, then Envoy.
 */
export async function runStandalone(opts: StandaloneOptions): Promise<StandaloneAgent> {
  const logger = opts.logger ?? new Logger("agent");
  const metrics = new Registry();
  const cache = new SnapshotCache();
  if (opts.spireSocket && !opts.trustDomain) throw new Error("--spire-socket needs --trust-domain");
  const identity = opts.spireSocket
    ? await startEdgeIdentity({
      socket: opts.spireSocket,
      trustDomain: opts.trustDomain!,
      template: opts.spiffeIdTemplate,
      outsideNamespaces: opts.outsideMeshNamespaces,
      logger: logger.child("identity"),
    })
    : undefined;
  const snapshots = new EdgeSnapshots({
    cache,
    translate: {
      edge: true,
      edgeLimits: opts.edgeLimits,
      ...(identity
        ? { mtls: { callerId: identity.callerId, trustDomain: identity.trustDomain } }
        : {}),
    },
    decorate: identity?.decorate,
    secrets: identity?.secrets,
  });
  identity?.onChange(() => snapshots.refreshSecrets());
  const dns = meshDnsResponder({ ...opts, logger, metrics });
  const engine = new Engine({
    logger: logger.child("config"),
    metrics,
    resolve: {
      bindAddress: opts.bindAddress,
      meshDomain: opts.meshDomain,
      ...(opts.usableAddresses?.length ? { usableAddresses: opts.usableAddresses } : {}),
    },
    sinks: [snapshots, ...(dns ? [meshRecordsSink(dns)] : [])],
  });
  const runtime = await startRuntime({
    ...opts,
    logger,
    metrics,
    cache,
    dns,
    envoyCluster: "aether-standalone",
    // The edge's virtual hosts are served over VHDS, which Envoy speaks over delta xDS only.
    delta: true,
    // Files whose current content does not parse; their last good objects keep serving.
    status: () => ({ config: engine.status, staleFiles: engine.input?.stale ?? [] }),
  });
  const source = opts.source ??
    await configSource(opts, {
      logger,
      metrics,
      // With identity, every endpoint's SPIFFE ID comes from its Pod.
      allPods: !!identity,
      keepDir: join(runtime.stateDir, "last-good"),
    });
  await source.start((snap) => engine.apply(snap));
  await runtime.startEnvoy();
  return {
    ...runtime,
    engine,
    snapshots,
    metrics,
    close: async (c) => {
      await source.stop();
      identity?.close();
      await runtime.close(c);
    },
  };
}
