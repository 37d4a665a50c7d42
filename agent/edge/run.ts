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
import type { Source } from "../../lib/source/mod.ts";
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
 * Starts the standalone agent: the runtime (xDS, DNS and admin servers), then Envoy beside the
 * first revision's read, resolve and translate — Envoy's own start-up overlaps ours: it dials the
 * listening xDS server and waits there for the first snapshot — then the source, the engine and
 * its sinks (the edge's xDS snapshots, the mesh DNS records). Resolves once the first revision is
 * applied and Envoy answers; a failure on the way stops everything it started.
 */
export async function runStandalone(opts: StandaloneOptions): Promise<StandaloneAgent> {
  const logger = opts.logger ?? new Logger("agent");
  const metrics = new Registry();
  const cache = new SnapshotCache();
  if (opts.spireSocket && !opts.trustDomain) throw new Error("--spire-socket needs --trust-domain");
  const dns = meshDnsResponder({ ...opts, logger, metrics });
  // Until the first SVID, /readyz says what it waits for (the engine starts after it).
  const state: { waiting?: string; engine?: Engine } = {
    waiting: opts.spireSocket
      ? `waiting for this edge's first SVID from the Workload API at ${opts.spireSocket} (is ` +
        "this node's spire-agent Ready, and an entry registered for this pod's service account?)"
      : undefined,
  };
  const runtime = await startRuntime({
    ...opts,
    logger,
    metrics,
    cache,
    dns,
    envoyCluster: "aether-standalone",
    // The edge's virtual hosts are served over VHDS, which Envoy speaks over delta xDS only.
    delta: true,
    holdReady: () => state.waiting,
    // Files whose current content does not parse; their last good objects keep serving.
    status: () => ({
      config: state.engine?.status,
      staleFiles: state.engine?.input?.stale ?? [],
    }),
  });
  let onLaunched!: () => void;
  const launched = new Promise<void>((r) => (onLaunched = r));
  const envoyUp = runtime.startEnvoy({ onLaunched });
  envoyUp.catch(() => {}); // Awaited below; a failure meanwhile must not go unhandled.
  let identity: Awaited<ReturnType<typeof startEdgeIdentity>> | undefined;
  let source: Source | undefined;
  try {
    // Envoy's process exists before the first revision's synchronous work holds the event loop.
    await Promise.race([launched, envoyUp]);
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
    state.waiting = undefined;
    const snapshots = new EdgeSnapshots({
      cache,
      translate: {
        edge: true,
        edgeLimits: opts.edgeLimits,
        scopedRoutesAt: opts.scopedRoutesAt,
        scopedRoutesOnDemand: opts.scopedRoutesOnDemand,
        ...(identity
          ? { mtls: { callerId: identity.callerId, trustDomain: identity.trustDomain } }
          : {}),
      },
      decorate: identity?.decorate,
      secrets: identity?.secrets,
      metrics,
    });
    identity?.onChange(() => snapshots.refreshSecrets());
    const engine = new Engine({
      logger: logger.child("config"),
      metrics,
      resolve: {
        bindAddress: opts.bindAddress,
        meshDomain: opts.meshDomain,
        ...(opts.usableAddresses?.length ? { usableAddresses: opts.usableAddresses } : {}),
        // The MeshIR only feeds the DNS responder here: none without one (in-cluster edges run
        // --dns-address=none).
        mesh: dns !== undefined,
      },
      sinks: [snapshots, ...(dns ? [meshRecordsSink(dns)] : [])],
    });
    state.engine = engine;
    const configured = opts.source ??
      await configSource(opts, {
        logger,
        metrics,
        // With identity, every endpoint's SPIFFE ID comes from its Pod.
        allPods: !!identity,
        keepDir: join(runtime.stateDir, "last-good"),
      });
    await configured.start((snap) => engine.apply(snap));
    source = configured;
    await envoyUp;
    const running = source, id = identity;
    return {
      ...runtime,
      engine,
      snapshots,
      metrics,
      close: async (c) => {
        await running.stop();
        id?.close();
        await runtime.close(c);
      },
    };
  } catch (e) {
    // Envoy up or failed first: a half-started one is never left behind. One adopted from a
    // previous agent keeps serving what it has (as it did before this agent started).
    await envoyUp.catch(() => {});
    await source?.stop().catch(() => {});
    identity?.close();
    await runtime.close({ keepEnvoy: runtime.envoy?.adopted === true }).catch(() => {});
    throw e;
  }
}
