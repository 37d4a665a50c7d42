/**
 * Standalone mode: a bare-metal agent that reads Gateway API YAML from a folder or file, serves
 * xDS to its Envoy (optionally started as a child process), and exposes the admin endpoints.
 * This is a contract (docs/standalone.md): flags and endpoints stay stable.
 * @module
 */
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { ensurePeer } from "../../lib/peers/mod.ts";
import { FileSource } from "../../lib/source/files.ts";
import type { Source } from "../../lib/source/types.ts";
import { type AdminServer, splitHostPort, startAdmin } from "../admin/server.ts";
import { EnvoyProcess } from "../envoy/process.ts";
import { Pipeline } from "../pipeline.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { envoyBootstrap, XdsServer } from "../xds/server/mod.ts";
import { xdsDebug } from "./debug.ts";
import { DnsResponder, recordsFromServices } from "../dns/mod.ts";

/** Options of `agent standalone` (flag names in comments). */
export interface StandaloneOptions {
  /** --config: folder or file of YAML. Ignored when `source` is given. */
  config?: string;
  /** A source to use instead of the config folder (tests). */
  source?: Source;
  /** --envoy: path to an envoy binary, "auto" (peer cache, installing if needed) or "none". */
  envoy: string;
  /** --bind-address: address Gateway listeners bind (default 127.0.0.1). */
  bindAddress: string;
  /** --admin-address: admin server host:port (default 127.0.0.1:15000). */
  adminAddress: string;
  /** --xds-address: xDS gRPC server host:port (default 127.0.0.1:18000). */
  xdsAddress: string;
  /** --node-id: the Envoy node id (default "aether-standalone"). */
  nodeId: string;
  /** --mesh-domain (default aether.internal). */
  meshDomain: string;
  /** --dns-address: mesh DNS responder host:port, UDP + TCP (default 127.0.0.1:18054; "none" = off). */
  dnsAddress: string;
  /** --dns-upstream: where non-mesh names are forwarded (default: /etc/resolv.conf). */
  dnsUpstreams?: string[];
  /** --envoy-log-level (default warning). */
  envoyLogLevel?: string;
  logger?: Logger;
}

/** Defaults for every flag. */
export const standaloneDefaults: Omit<StandaloneOptions, "config" | "source" | "logger"> = {
  envoy: "auto",
  bindAddress: "127.0.0.1",
  adminAddress: "127.0.0.1:15000",
  xdsAddress: "127.0.0.1:18000",
  nodeId: "aether-standalone",
  meshDomain: "aether.internal",
  dnsAddress: "127.0.0.1:18054",
};

/** A running standalone agent. */
export interface StandaloneAgent {
  admin: AdminServer;
  xds: XdsServer;
  xdsPort: number;
  pipeline: Pipeline;
  envoy?: EnvoyProcess;
  /** The mesh DNS responder and its bound port, unless turned off. */
  dns?: { responder: DnsResponder; port: number };
  metrics: Registry;
  /** True when Envoy has ACKed the current snapshot. */
  ready(): boolean;
  /** Resolves once ready (or rejects after timeoutMs). */
  waitReady(timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

/** Starts the standalone agent. */
export async function runStandalone(opts: StandaloneOptions): Promise<StandaloneAgent> {
  const logger = opts.logger ?? new Logger("agent");
  const metrics = new Registry();
  const cache = new SnapshotCache();
  const pipeline = new Pipeline({
    cache,
    logger: logger.child("config"),
    metrics,
    resolve: { bindAddress: opts.bindAddress, meshDomain: opts.meshDomain },
    translate: { edge: true },
  });
  const source = opts.source ?? new FileSource({ path: opts.config ?? "." });
  const xds = new XdsServer({ cache, logger: logger.child("xds"), metrics });
  const xdsAddr = splitHostPort(opts.xdsAddress);
  const xdsPort = await xds.listen({ host: xdsAddr.hostname, port: xdsAddr.port });
  logger.info("xds server listening", { address: `${xdsAddr.hostname}:${xdsPort}` });
  let dns: StandaloneAgent["dns"];
  if (opts.dnsAddress !== "none") {
    const responder = new DnsResponder({
      meshDomain: opts.meshDomain,
      upstreams: opts.dnsUpstreams,
      metrics,
      logger: logger.child("dns"),
    });
    const at = splitHostPort(opts.dnsAddress);
    const { port } = await responder.listen({ address: at.hostname, port: at.port });
    logger.info("dns responder listening", {
      address: `${at.hostname}:${port}`,
      meshDomain: opts.meshDomain,
    });
    dns = { responder, port };
  }
  await source.start((snap) => {
    pipeline.apply(snap);
    // Mesh names answer with each Service's clusterIP (standalone: from the config folder).
    const services = snap.objects.filter((o) => o.kind === "Service" && o.apiVersion === "v1");
    dns?.responder.setRecords(recordsFromServices(services, opts.meshDomain));
  });

  const ready = () => {
    const snap = cache.getSnapshot(opts.nodeId);
    return !!snap && xds.isReady(opts.nodeId);
  };
  const readiness = () => {
    const snap = cache.getSnapshot(opts.nodeId);
    if (!snap) return { ready: false, detail: "no configuration yet" };
    if (xds.isReady(opts.nodeId)) {
      return { ready: true, detail: `ready: Envoy ACKed ${snap.version}` };
    }
    const nack = xds.lastNack(opts.nodeId);
    return {
      ready: false,
      detail: nack
        ? `not ready: Envoy rejected ${nack.typeUrl} version ${nack.version}: ${nack.errorDetail}`
        : `not ready: waiting for Envoy to ACK ${snap.version}`,
    };
  };
  const admin = await startAdmin(opts.adminAddress, {
    metrics,
    beforeMetrics: () => dns?.responder.metrics.flush(),
    readiness,
    status: () => ({
      nodeId: opts.nodeId,
      ready: readiness(),
      config: pipeline.status,
      lastNack: xds.lastNack(opts.nodeId) ?? null,
    }),
    xds: () => ({ streams: xds.status(), ...(xdsDebug(cache) as Record<string, unknown>) }),
  });
  logger.info("admin server listening", { address: admin.address });

  let envoy: EnvoyProcess | undefined;
  if (opts.envoy !== "none") {
    const binary = opts.envoy === "auto" ? await ensurePeer("envoy") : opts.envoy;
    envoy = new EnvoyProcess({
      binary,
      logger: logger.child("envoy"),
      logLevel: opts.envoyLogLevel,
      bootstrap: envoyBootstrap({
        nodeId: opts.nodeId,
        cluster: "aether-standalone",
        xdsAddress: xdsAddr.hostname,
        xdsPort,
        adminAddress: "127.0.0.1",
        adminPort: 0,
      }),
    });
    await envoy.start();
  }

  const waitReady = async (timeoutMs = 15000) => {
    const deadline = Date.now() + timeoutMs;
    while (!ready()) {
      if (Date.now() > deadline) {
        throw new Error(`not ready after ${timeoutMs} ms: ${readiness().detail}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return {
    admin,
    xds,
    xdsPort,
    pipeline,
    envoy,
    dns,
    metrics,
    ready,
    waitReady,
    close: async () => {
      await source.stop();
      await envoy?.stop();
      await xds.close();
      await dns?.responder.close();
      await admin.close();
    },
  };
}
