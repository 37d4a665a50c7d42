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
  const dns = meshDnsResponder({ ...opts, logger, metrics });
  // Until the first SVID, /readyz says what it waits for (the engine starts after it).
  let waiting = opts.spireSocket
    ? `waiting for this edge's first SVID from the Workload API at ${opts.spireSocket} (is ` +
      "this node's spire-agent Ready, and an entry registered for this pod's service account?)"
    : undefined;
  // The engine once started (the runtime's /status asks before).
  const started: { engine?: Engine } = {};
  const runtime = await startRuntime({
    ...opts,
    logger,
    metrics,
    cache,
    dns,
    envoyCluster: "aether-standalone",
    // The edge's virtual hosts are served over VHDS, which Envoy speaks over delta xDS only.
    delta: true,
    holdReady: () => waiting,
    // Files whose current content does not parse; their last good objects keep serving.
    status: () => ({
      config: started.engine?.status,
      staleFiles: started.engine?.input?.stale ?? [],
    }),
  });
  let identity;
  try {
    identity = opts.spireSocket
      ? await startEdgeIdentity({
        socket: opts.spireSocket,
        trustDomain: opts.trustDomain!,
        template: opts.spiffeIdTemplate,
        outsideNamespaces: opts.outsideMeshNamespaces,
        logger: logger.child("identity"),
        metrics,
      })
      : undefined;
  } catch (e) {
    await runtime.close();
    throw e;
  }
  waiting = undefined;
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
    metrics,
  });
  identity?.onChange(() => snapshots.refreshSecrets());
  const running = new Engine({
    logger: logger.child("config"),
    metrics,
    resolve: {
      bindAddress: opts.bindAddress,
      meshDomain: opts.meshDomain,
      ...(opts.usableAddresses?.length ? { usableAddresses: opts.usableAddresses } : {}),
    },
    sinks: [snapshots, ...(dns ? [meshRecordsSink(dns)] : [])],
  });
  started.engine = running;
  const source = opts.source ??
    await configSource(opts, {
      logger,
      metrics,
      // With identity, every endpoint's SPIFFE ID comes from its Pod.
      allPods: !!identity,
      keepDir: join(runtime.stateDir, "last-good"),
    });
  await source.start((snap) => running.apply(snap));
  await runtime.startEnvoy();
  return {
    ...runtime,
    engine: running,
    snapshots,
    metrics,
    close: async (c) => {
      await source.stop();
      identity?.close();
      await runtime.close(c);
    },
  };
}
