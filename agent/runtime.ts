/**
 * What every agent role runs around its pipeline: the xDS server, the mesh DNS responder, the
 * admin server (readiness = Envoy ACKed the current config) and Envoy as a supervised child.
 * @module
 */
import type { Logger } from "../lib/log/mod.ts";
import { addProcessMetrics, type Registry } from "../lib/metrics/mod.ts";
import { startMemoryTrim } from "../lib/memory/trim.ts";
import { type AdminServer, splitHostPort, startAdmin } from "./admin/mod.ts";
import { CLUSTERSET_DOMAIN, DnsResponder } from "./dns/mod.ts";
import { EnvoyProcess, recordedEnvoy } from "./envoy/mod.ts";
import { claimStateDir, cleanStaleStateDirs, tempStatePrefix } from "./envoy/mod.ts";
import { dirname } from "node:path";
import {
  concurrencyArgs,
  type EnvoyConcurrency,
  locateEnvoy,
  resolveEnvoyConcurrency,
} from "./envoy/mod.ts";
import type { SnapshotCache } from "./xds/cache/mod.ts";
import { envoyBootstrap, XdsServer, type XdsServerOptions } from "./xds/server/mod.ts";
import { xdsDebug } from "./admin/mod.ts";

/** Options shared by every role. */
export interface RuntimeOptions {
  logger: Logger;
  metrics: Registry;
  cache: SnapshotCache;
  /** xDS server `host:port` (port 0 = ephemeral). */
  xdsAddress: string;
  /** Admin server `host:port`. */
  adminAddress: string;
  /** Node id of the Envoy this agent starts (and whose readiness `/readyz` reports). */
  nodeId: string;
  /** Envoy's `node.cluster`. */
  envoyCluster: string;
  /** Envoy binary path, "auto" (PATH, else the project's peer cache; never downloads) or "none". */
  envoy: string;
  envoyLogLevel?: string;
  /** More arguments for the Envoy this agent starts (e.g. the node proxy's drain). */
  envoyArgs?: readonly string[];
  /**
   * Where Envoy is recorded so a restarted agent adopts it (see agent/envoy/process.ts). Unset: a
   * temporary directory removed on close (tests, embedding); the CLI passes a lasting one.
   */
  stateDir?: string;
  /** Leave Envoy running when the agent closes (the next agent adopts it). */
  keepEnvoy?: boolean;
  /**
   * Drain Envoy's listeners for this long before stopping it on close (a pod leaving a Service:
   * clients are told to close and reconnect elsewhere); its Envoy drains immediately within it.
   * Unset/0: stopped at once.
   */
  shutdownDrainMs?: number;
  /** Envoy's overload-manager limit on downstream connections (unset/0 = none). */
  maxDownstreamConnections?: number;
  /**
   * Every cluster's stats created up front (`--envoy-eager-stats`); default: on first use, so idle
   * clusters cost no stats memory (the bootstrap's `deferred_stat_options`).
   */
  envoyEagerStats?: boolean;
  /** Every stat Envoy has (`--envoy-all-stats`); default: per-cluster stats nothing reads are not made. */
  envoyAllStats?: boolean;
  /** Every cluster on every worker up front (`--envoy-eager-clusters`); default: on first use. */
  envoyEagerClusters?: boolean;
  /** Envoy's worker threads (`--concurrency`; default auto, agent/envoy/concurrency.ts). */
  envoyConcurrency?: EnvoyConcurrency;
  /** Use delta xDS (needed for on-demand CDS and for VHDS, which the edge and node proxies use). */
  delta?: boolean;
  /** DNS responder `host:port` (with `dns`). */
  dnsAddress: string;
  /** The mesh DNS responder ({@link meshDnsResponder}) to listen on `dnsAddress`, if any. */
  dns?: DnsResponder;
  meshDomain: string;
  /** Extra xDS server options (e.g. the on-demand hook). */
  xds?: Partial<XdsServerOptions>;
  /** The role's part of the `/status` document. */
  status: () => Record<string, unknown>;
  /**
   * Why the role is not ready yet whatever Envoy ACKed (e.g. identity on and no trust bundle from
   * SPIRE: nothing could be served over mTLS); undefined when it has no such reason.
   */
  holdReady?: () => string | undefined;
  /** The `/debug/capture` document (the node role with capture). */
  debugCapture?: () => unknown;
}

/** A running runtime. */
export interface Runtime {
  xds: XdsServer;
  xdsPort: number;
  admin: AdminServer;
  dns?: { responder: DnsResponder; port: number };
  envoy?: EnvoyProcess;
  /** The state directory (the CLI's lasting one, or a temporary one). */
  stateDir: string;
  readiness(): { ready: boolean; detail: string };
  ready(): boolean;
  waitReady(timeoutMs?: number): Promise<void>;
  /**
   * Starts Envoy, or adopts the one recorded in the state directory; resolves once it answers.
   * It may be called before the first snapshot: Envoy dials the (already listening) xDS server
   * and waits there for its config. `onLaunched` is called once the Envoy process exists.
   */
  startEnvoy(opts?: { onLaunched?: () => void }): Promise<void>;
  /** Stops everything; Envoy too unless `keepEnvoy` (here or in the options). */
  close(opts?: { keepEnvoy?: boolean }): Promise<void>;
}

/** Options of {@link meshDnsResponder}: the DNS flags of every role. */
export interface MeshDnsOptions {
  /** DNS responder `host:port`, or "none". */
  dnsAddress: string;
  dnsUpstreams?: string[];
  meshDomain: string;
  /** In a clusterset (`--registry-url`): `clusterset.local` names are answered too. */
  registryUrl?: string;
  logger: Logger;
  metrics: Registry;
}

/** The mesh DNS responder the flags ask for (not yet listening), or undefined for "none". */
export function meshDnsResponder(o: MeshDnsOptions): DnsResponder | undefined {
  if (o.dnsAddress === "none") return undefined;
  return new DnsResponder({
    meshDomain: o.meshDomain,
    ...(o.registryUrl !== undefined ? { extraZones: [CLUSTERSET_DOMAIN] } : {}),
    upstreams: o.dnsUpstreams,
    metrics: o.metrics,
    logger: o.logger.child("dns"),
  });
}

/** The state directory: claimed for this agent, with the Envoy a previous agent left running. */
async function openState(o: RuntimeOptions) {
  const temporary = o.stateDir === undefined;
  const dir = o.stateDir ?? await Deno.makeTempDir({ prefix: tempStatePrefix });
  if (temporary) {
    for (const stale of await cleanStaleStateDirs(dirname(dir), dir)) {
      o.logger.info("removed a crashed agent's temporary state directory", { path: stale });
    }
  }
  const claim = await claimStateDir(dir, {
    adminAddress: o.adminAddress,
    xdsAddress: o.xdsAddress,
    role: o.envoyCluster,
  });
  const envoy = o.envoy === "none" ? undefined : await recordedEnvoy(dir);
  return {
    dir,
    envoy,
    temporary,
    update: claim.update,
    release: async (keepEnvoy: boolean) => {
      await claim.release();
      if (temporary && !keepEnvoy) await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Starts the xDS server, DNS responder and admin server. */
export async function startRuntime(o: RuntimeOptions): Promise<Runtime> {
  const { logger, metrics, cache } = o;
  // The agent's own memory and CPU on /metrics (process_resident_memory_bytes, …).
  addProcessMetrics(metrics);
  // Freed native heap back to the kernel every 10 s (AETHER_MEMORY_TRIM_SECONDS).
  const trim = startMemoryTrim({ metrics, logger });
  const xds = new XdsServer({ cache, logger: logger.child("xds"), metrics, ...o.xds });
  const xdsAddr = splitHostPort(o.xdsAddress);
  const state = await openState(o);
  // An Envoy left running by a previous agent dials the xDS address in its bootstrap: listen
  // there again (port 0 = whatever it was), so it reconnects by itself.
  if (xdsAddr.port === 0 && state.envoy) {
    const was = splitHostPort(state.envoy.xdsAddress);
    if (was.hostname === xdsAddr.hostname) xdsAddr.port = was.port;
  }
  const xdsPort = await xds.listen({ host: xdsAddr.hostname, port: xdsAddr.port });
  logger.info("xds server listening", { address: `${xdsAddr.hostname}:${xdsPort}` });

  let dns: Runtime["dns"];
  if (o.dns) {
    const responder = o.dns;
    const at = splitHostPort(o.dnsAddress);
    const { port } = await responder.listen({ address: at.hostname, port: at.port });
    logger.info("dns responder listening", {
      address: `${at.hostname}:${port}`,
      meshDomain: o.meshDomain,
    });
    dns = { responder, port };
  }

  const readiness = () => {
    const held = o.holdReady?.();
    if (held) return { ready: false, detail: `not ready: ${held}` };
    const snap = cache.getSnapshot(o.nodeId);
    if (!snap) return { ready: false, detail: "no configuration yet" };
    if (xds.isReady(o.nodeId)) return { ready: true, detail: `ready: Envoy ACKed ${snap.version}` };
    const nack = xds.lastNack(o.nodeId);
    return {
      ready: false,
      detail: nack
        ? `not ready: Envoy rejected ${nack.typeUrl} version ${nack.version}: ${nack.errorDetail}`
        : `not ready: waiting for Envoy to ACK ${snap.version}`,
    };
  };
  const ready = () => readiness().ready;
  const admin = await startAdmin(o.adminAddress, {
    metrics,
    beforeMetrics: () => dns?.responder.metrics.flush(),
    readiness,
    status: () => ({
      nodeId: o.nodeId,
      ready: readiness(),
      ...o.status(),
      lastNack: xds.lastNack(o.nodeId) ?? null,
    }),
    xds: () => ({ streams: xds.status(), ...(xdsDebug(cache) as Record<string, unknown>) }),
    ...(o.debugCapture ? { capture: o.debugCapture } : {}),
  });
  logger.info("admin server listening", { address: admin.address });
  await state.update({
    adminAddress: admin.address,
    xdsAddress: `${xdsAddr.hostname}:${xdsPort}`,
  });

  // Closed once: a failed start closes it, and so may its caller.
  let closing: Promise<void> | undefined;
  const runtime: Runtime = {
    xds,
    xdsPort,
    admin,
    dns,
    stateDir: state.dir,
    readiness,
    ready,
    waitReady: async (timeoutMs = 15000) => {
      const deadline = Date.now() + timeoutMs;
      while (!ready()) {
        if (Date.now() > deadline) {
          throw new Error(`not ready after ${timeoutMs} ms: ${readiness().detail}`);
        }
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    startEnvoy: async (s = {}) => {
      if (o.envoy === "none") return;
      const binary = await locateEnvoy(o.envoy);
      runtime.envoy = new EnvoyProcess({
        binary,
        stateDir: state.dir,
        // Only an Envoy a later agent can find (a lasting state directory) outlives this one.
        outlive: !state.temporary,
        xdsAddress: `${xdsAddr.hostname}:${xdsPort}`,
        logger: logger.child("envoy"),
        logLevel: o.envoyLogLevel,
        extraArgs: concurrencyArgs(
          await resolveEnvoyConcurrency(o.envoyConcurrency ?? "auto"),
          o.envoyArgs ?? shutdownDrainArgs(o.shutdownDrainMs),
        ),
        bootstrap: envoyBootstrap({
          nodeId: o.nodeId,
          cluster: o.envoyCluster,
          xdsAddress: xdsAddr.hostname,
          xdsPort,
          adminAddress: "127.0.0.1",
          adminPort: 0,
          delta: o.delta,
          maxDownstreamConnections: o.maxDownstreamConnections,
          eagerStats: o.envoyEagerStats,
          allStats: o.envoyAllStats,
          eagerClusters: o.envoyEagerClusters,
        }),
      });
      try {
        await runtime.envoy.start(undefined, s.onLaunched);
      } catch (e) {
        // Nothing left behind: no half-started Envoy, listeners or temporary directory.
        await runtime.close({ keepEnvoy: false }).catch(() => {});
        throw e;
      }
    },
    close: (c = {}) =>
      closing ??= (async () => {
        const keep = c.keepEnvoy ?? o.keepEnvoy ?? false;
        await runtime.envoy?.stop({ keep, drainMs: o.shutdownDrainMs });
        await xds.close();
        await dns?.responder.close();
        await admin.close();
        trim.stop();
        await state.release(keep);
      })(),
  };
  return runtime;
}

/**
 * Envoy's drain for a shutdown drain of `ms`: every connection told to close at once, listeners
 * closed after the drain time (undefined without one).
 */
export function shutdownDrainArgs(ms: number | undefined): string[] | undefined {
  if (!ms) return undefined;
  return ["--drain-strategy", "immediate", "--drain-time-s", String(Math.ceil(ms / 1000))];
}
