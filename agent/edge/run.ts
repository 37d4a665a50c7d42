/**
 * Standalone mode: a bare-metal agent that reads Gateway API YAML from a folder or file, serves
 * xDS to its Envoy (optionally started as a child process), and exposes the admin endpoints.
 * This is a contract (docs/standalone.md): flags and endpoints stay stable.
 * @module
 */
import { join } from "node:path";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { configSource } from "../config_source.ts";
import type { StaleFile } from "../../lib/source/types.ts";
import { Pipeline } from "../pipeline.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { recordsFromMesh } from "../dns/mod.ts";
import { type Runtime, startRuntime } from "../runtime.ts";
import { startEdgeIdentity } from "../identity/edge_identity.ts";
import { standaloneDefaults } from "./defaults.ts";
import type { StandaloneOptions } from "./options.ts";

export { standaloneDefaults };
export type { StandaloneOptions };

/** A running standalone agent. */
export interface StandaloneAgent extends Runtime {
  pipeline: Pipeline;
  metrics: Registry;
}

/** Starts the standalone agent. */
export async function runStandalone(opts: StandaloneOptions): Promise<StandaloneAgent> {
  const logger = opts.logger ?? new Logger("agent");
  const metrics = new Registry();
  const cache = new SnapshotCache();
  if (opts.spireSocket && !opts.trustDomain) throw new Error("--spire-socket needs --trust-domain");
  // The identity's rotation callback needs the pipeline, which is built after the identity.
  const late: { pipeline?: Pipeline } = {};
  const identity = opts.spireSocket
    ? await startEdgeIdentity({
      socket: opts.spireSocket,
      trustDomain: opts.trustDomain!,
      template: opts.spiffeIdTemplate,
      logger: logger.child("identity"),
      onChange: () => late.pipeline?.refreshSecrets(),
    })
    : undefined;
  const pipeline = new Pipeline({
    cache,
    logger: logger.child("config"),
    metrics,
    resolve: {
      bindAddress: opts.bindAddress,
      meshDomain: opts.meshDomain,
      ...(opts.usableAddresses?.length ? { usableAddresses: opts.usableAddresses } : {}),
    },
    translate: {
      edge: true,
      edgeLimits: opts.edgeLimits,
      ...(identity
        ? { mtls: { callerId: identity.callerId, trustDomain: identity.trustDomain } }
        : {}),
    },
    decorate: identity?.decorate,
    extraSecrets: identity?.secrets,
    // Mesh names answer with the VIPs of resolve's mesh services (one owner rule with xDS).
    onServed: (result) => runtime.dns?.responder.setRecords(recordsFromMesh(result.mesh)),
  });
  late.pipeline = pipeline;
  const runtime = await startRuntime({
    ...opts,
    logger,
    metrics,
    cache,
    envoyCluster: "aether-standalone",
    // The edge's virtual hosts are served over VHDS, which Envoy speaks over delta xDS only.
    delta: true,
    status: () => ({ config: pipeline.status, staleFiles }),
  });
  // Files whose current content does not parse; their last good objects keep serving.
  let staleFiles: StaleFile[] = [];
  const source = opts.source ??
    await configSource(opts, { logger, metrics, keepDir: join(runtime.stateDir, "last-good") });
  await source.start((snap) => {
    staleFiles = snap.stale ?? [];
    pipeline.apply(snap);
  });
  await runtime.startEnvoy();
  return {
    ...runtime,
    pipeline,
    metrics,
    close: async (c) => {
      await source.stop();
      identity?.close();
      await runtime.close(c);
    },
  };
}
