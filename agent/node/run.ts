/**
 * The node role: one agent per node programs that node's proxy Envoy for east-west (GAMMA)
 * traffic — per-pod egress listeners inside each pod's netns, route tables per caller namespace,
 * clusters only for the node's dependency set, grown by on-demand CDS over delta xDS. Until the
 * Kubernetes source exists it reads the same config folder as standalone (plus Pod objects).
 * @module
 */
import { join } from "node:path";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { Engine } from "../../lib/engine/mod.ts";
import { type NodeConfigStatus, nodeConfigStatus } from "./status_view.ts";
import { configSource, type SourceFlags } from "../config_source.ts";
import type { Source } from "../../lib/source/mod.ts";
import { meshRecordsSink } from "../dns/mod.ts";
import { meshDnsResponder, type Runtime, startRuntime } from "../runtime.ts";
import { EncodeMetrics, SnapshotCache } from "../xds/cache/mod.ts";
import { NodeSnapshots } from "./snapshots.ts";
import { NodeMeshSink } from "./sink.ts";
import {
  type IdentityScheme,
  identityScheme,
  NodeIdentities,
  WorkloadApiClient,
} from "../identity/mod.ts";
import { bundleSecret, svidSecret } from "../xds/translate/mod.ts";
import {
  type CaptureApplier,
  CaptureSink,
  type CniCapture,
  cniCapture,
  DEFAULT_CAPTURE_PORT,
  NftApplier,
  PodAdopter,
} from "../capture/mod.ts";
import { parseDaemonSetRef, type UninstallVerdict } from "../../cni/mod.ts";
import { uninstallCheck } from "./uninstall_check.ts";
import { MergedSource } from "../../lib/engine/mod.ts";
import { captureListenerName } from "../xds/translate/node/mod.ts";
import { listenerServed, type ServedView, whenListenerServed } from "./listener_served.ts";
import { captureDnsRedirect } from "./capture_dns.ts";
import type { EnvoyConcurrency } from "../envoy/mod.ts";

/** Options of `agent node`. */
export interface NodeAgentOptions extends SourceFlags {
  /** --config: folder or file of YAML (Services, EndpointSlices, routes, Pods). */
  config?: string;
  /** A source instead of the folder (tests). */
  source?: Source;
  /** --node-name: this node; also the Envoy node id. Pods with this spec.nodeName are served. */
  nodeName: string;
  envoy: string;
  adminAddress: string;
  xdsAddress: string;
  meshDomain: string;
  dnsAddress: string;
  dnsUpstreams?: string[];
  envoyLogLevel?: string;
  /** --max-downstream-connections: Envoy's overload-manager connection limit (0 = none). */
  maxDownstreamConnections?: number;
  /** --envoy-eager-stats: Envoy creates every cluster's stats up front (default: on first use). */
  envoyEagerStats?: boolean;
  /** --envoy-all-stats: Envoy makes every stat (default: the per-cluster stats nothing reads are not). */
  envoyAllStats?: boolean;
  /** --envoy-eager-clusters: every cluster on every worker up front (default: on first use). */
  envoyEagerClusters?: boolean;
  /** --envoy-concurrency: Envoy's worker threads (default auto: this process's CPUs). */
  envoyConcurrency?: EnvoyConcurrency;
  /** --state-dir: where Envoy is recorded for adoption by a restarted agent (unset: a temp dir). */
  stateDir?: string;
  /** --keep-envoy: leave Envoy running when the agent stops. */
  keepEnvoy?: boolean;
  logger?: Logger;
  /**
   * --spire-admin-socket: the SPIRE agent's admin socket (Delegated Identity API). With it every
   * mesh hop is SPIFFE mTLS (docs/identity.md); without it the node proxy is plaintext.
   */
  spireAdminSocket?: string;
  /** --spire-socket: the Workload API socket; the agent's own SVID is fetched and logged. */
  spireSocket?: string;
  /** --trust-domain (required with the admin socket). */
  trustDomain?: string;
  /** --spiffe-id-template (default `spiffe://{td}/ns/{ns}/sa/{sa}`). */
  spiffeIdTemplate?: string;
  /** --outside-mesh-namespace: namespaces whose pods are dialled as they are (no identity). */
  outsideMeshNamespaces?: string[];
  /**
   * --capture: transparent capture (docs/capture.md). Each served pod's netns gets the
   * `inet aether` table (TCP to a mesh VIP:port → the node proxy's capture listener
   * `127.0.0.1:15001` in that netns) and the node proxy a capture listener per pod.
   */
  capture?: boolean;
  /**
   * --capture-dns: the cluster DNS servers whose queries (UDP and TCP :53) each captured pod sends
   * to this agent's DNS responder (`--dns-address`) instead — IPs, or Services as
   * `<namespace>/<name>` (e.g. `kube-system/kube-dns`: its cluster IPs, followed as they change).
   * Empty: pods' DNS untouched.
   */
  captureDns?: string[];
  /**
   * --cni-socket: with --capture, where the CNI plugin reaches this agent (e.g.
   * `/run/aether/cni.sock`): pods are learnt from the plugin (their netns, IPs), and a pod's ADD
   * returns only once its capture is in place (docs/capture.md).
   */
  cniSocket?: string;
  /**
   * --uninstall-when-gone `<namespace>/<daemonset>`: with --capture, when the agent stops and that
   * DaemonSet is gone or being deleted (aether is being uninstalled, cni/uninstall_check.ts;
   * asked over --kubeconfig, else in cluster) every pod's table is removed; otherwise, and when
   * the API server cannot say, they stay for the next agent.
   */
  uninstallWhenGone?: string;
  /** The question asked for --uninstall-when-gone instead of the API server (tests). */
  uninstallCheck?: () => Promise<UninstallVerdict>;
  /** The runtime's netns folder as this agent sees it (default `/var/run/netns`). */
  netnsDir?: string;
  /** The applier of --capture instead of nftables (tests). */
  captureApplier?: CaptureApplier;
}

/**
 * How the node proxy drains: when a listener or filter chain goes (a pod removed, or its identity
 * without an SVID, docs/identity.md) its HTTP connections are told to close at their next
 * response and every connection still open is closed 5 s later (Envoy's default: 600 s, closing
 * gradually), so no connection outlives the certificate it was made with for long. Envoy takes
 * this on its command line only; the chart's node-proxy container passes the same.
 */
export const NODE_PROXY_DRAIN_ARGS: readonly string[] = [
  "--drain-strategy",
  "immediate",
  "--drain-time-s",
  "5",
];

/** Defaults for `agent node`. */
export const nodeDefaults: Omit<NodeAgentOptions, "config" | "source" | "logger" | "nodeName"> = {
  envoy: "auto",
  adminAddress: "127.0.0.1:15000",
  xdsAddress: "127.0.0.1:18000",
  meshDomain: "aether.internal",
  dnsAddress: "127.0.0.1:18054",
};

/**
 * What `/status` shows for a node agent: the engine's status (objects only when no controller
 * writes their status, see status_view.ts) plus this node's view.
 */
export type NodeStatus = NodeConfigStatus & { pods: number; dependencies: string[] };

/** A running node agent. */
export interface NodeAgent extends Runtime {
  engine: Engine;
  snapshots: NodeSnapshots;
  metrics: Registry;
  status(): NodeStatus;
}

/** Starts the node agent. */
export async function runNode(opts: NodeAgentOptions): Promise<NodeAgent> {
  const logger = opts.logger ?? new Logger("agent");
  const metrics = new Registry();
  const cache = new SnapshotCache();
  const invalid = metrics.counter(
    "aether_xds_invalid_resources_total",
    "Resources left out of a snapshot.",
  );
  if (opts.cniSocket && !opts.capture) throw new Error("--cni-socket needs --capture");
  if (opts.uninstallWhenGone !== undefined && !opts.capture) {
    throw new Error("--uninstall-when-gone needs --capture");
  }
  const uninstalling = opts.uninstallWhenGone === undefined
    ? undefined
    : opts.uninstallCheck ?? uninstallCheck(opts, parseDaemonSetRef(opts.uninstallWhenGone));
  let scheme: IdentityScheme | undefined;
  if (opts.spireAdminSocket) {
    if (!opts.trustDomain) throw new Error("--spire-admin-socket needs --trust-domain");
    scheme = identityScheme(opts.trustDomain, opts.spiffeIdTemplate, opts.outsideMeshNamespaces);
  }
  const snapshots = new NodeSnapshots({
    cache,
    translate: {
      // No identity holds an SVID until SPIRE delivers one (setSecrets says which do).
      ...(scheme
        ? {
          identity: { trustDomain: scheme.trustDomain, template: scheme.template, certified: [] },
        }
        : {}),
      ...(opts.capture ? { capture: { port: DEFAULT_CAPTURE_PORT } } : {}),
    },
    encodeMetrics: new EncodeMetrics(metrics),
    onInvalid: (typeUrl, name, error) => {
      invalid.inc({ type_url: typeUrl });
      logger.error("resource left out of the snapshot", { typeUrl, name, error: String(error) });
    },
  });
  const identities = scheme && new NodeIdentities({
    adminSocket: opts.spireAdminSocket!,
    logger: logger.child("identity"),
    metrics,
    onChange: () => {
      const svids = identities!.svids();
      snapshots.setSecrets(
        [...svids.map(svidSecret), ...identities!.bundles().map(bundleSecret)],
        svids.map((s) => s.spiffeId),
      );
    },
  });
  const own = opts.spireSocket
    ? new WorkloadApiClient({
      socket: opts.spireSocket,
      logger: logger.child("workload-api"),
      onUpdate: (u) =>
        logger.info("own SVID", {
          spiffeId: u.svids[0]?.spiffeId,
          expiresAt: u.svids[0] && new Date(u.svids[0].expiresAt).toISOString(),
        }),
    })
    : undefined;
  // The engine (resolve with its own state, problems, status) and its sinks: this node's
  // pods and the MeshIR → per-node snapshots; the mesh DNS records.
  const sink = new NodeMeshSink({
    nodeName: opts.nodeName,
    snapshots,
    identity: scheme && {
      scheme,
      setWanted: (wanted) => identities!.setWanted(wanted),
      changed: () => identities!.o.onChange(),
    },
  });
  const dns = meshDnsResponder({ ...opts, logger, metrics });
  const applier = opts.capture ? opts.captureApplier ?? new NftApplier() : undefined;
  let cni: CniCapture | undefined = undefined; // made below, once the runtime is up
  // Pods running before the agent (no CNI record): their netns found, recorded, captured.
  const adopter = applier?.addresses && opts.cniSocket
    ? new PodAdopter({
      nodeName: opts.nodeName,
      netnsDir: opts.netnsDir ?? "/var/run/netns",
      outsideNamespaces: opts.outsideMeshNamespaces ?? [],
      addressesIn: (path) => applier.addresses!(path),
      records: () => cni?.source,
      logger: logger.child("adopt"),
    })
    : undefined;
  const capture = applier
    ? new CaptureSink({
      nodeName: opts.nodeName,
      applier,
      logger: logger.child("capture"),
      metrics,
      capturePort: DEFAULT_CAPTURE_PORT,
      ...captureDnsRedirect(opts),
    })
    : undefined;
  const engine = new Engine({
    logger: logger.child("config"),
    metrics,
    resolve: { meshDomain: opts.meshDomain },
    sinks: [sink, ...[capture, adopter, dns && meshRecordsSink(dns)].filter((x) => !!x)],
  });
  const status = (): NodeStatus => ({
    ...nodeConfigStatus(engine.status, engine.input?.admitted === true),
    pods: sink.pods,
    dependencies: snapshots.dependencies(opts.nodeName) ?? [],
  });
  const runtime = await startRuntime({
    ...opts,
    logger,
    metrics,
    cache,
    dns,
    nodeId: opts.nodeName,
    envoyCluster: "aether-node",
    envoyArgs: NODE_PROXY_DRAIN_ARGS,
    delta: true,
    // Each stream's node metadata says what its Envoy's bootstrap enables (an adopted Envoy may
    // predate this agent): the node is translated for that before anything is pushed.
    xds: { onDemand: snapshots.onDemand, onNode: snapshots.onNode },
    // With identity, the node serves its pods only over mTLS: not ready before SPIRE's bundle.
    holdReady: () => identities?.waiting(),
    status: () => ({
      config: status(),
      staleFiles: engine.input?.stale ?? [],
      ...(identities
        ? {
          identity: {
            spireConnected: identities.connected,
            trustDomains: identities.bundles().map((b) => b.trustDomain),
            svids: identities.svids().map((v) => ({
              spiffeId: v.spiffeId,
              expiresAt: new Date(v.expiresAt).toISOString(),
            })),
          },
        }
        : {}),
    }),
    // Each pod's table (as last applied and read back) and whether the node proxy serves its
    // capture listener: what to look at when a pod's traffic is not captured.
    ...(capture
      ? {
        debugCapture: () => ({
          node: opts.nodeName,
          pods: capture.pods().map((p) => {
            const listener = captureListenerName(p);
            return { ...p, listener, listenerServed: listenerServed(served, listener) };
          }),
        }),
      }
      : {}),
  });

  const served: ServedView = {
    snapshot: () => cache.getSnapshot(opts.nodeName),
    ready: () => runtime.xds.isReady(opts.nodeName),
    onReady: (listener) => runtime.xds.onReady(opts.nodeName, listener),
  };
  const configured = opts.source ?? await configSource(opts, {
    logger,
    metrics,
    nodeName: opts.nodeName,
    allPods: !!scheme,
    keepDir: join(runtime.stateDir, "last-good"),
  });
  // The plugin's pods are a partition of their own; its server starts first, so an ADD that
  // comes while the API server is still listing waits for its capture like any other.
  cni = capture && opts.cniSocket
    ? cniCapture({
      stateDir: runtime.stateDir,
      socketPath: opts.cniSocket,
      logger: logger.child("cni"),
      // Captured = the pod's table in place and its capture listener served by the node proxy:
      // the pod's first connection to a VIP finds the listener the table sends it to.
      captured: async (pod, signal) => {
        const c = await capture.whenCaptured(pod.netnsPath, signal);
        await whenListenerServed(served, captureListenerName(c), signal);
      },
    })
    : undefined;
  if (cni) await cni.server.start();
  const source = cni
    ? new MergedSource([
      { origin: "config", source: configured },
      { origin: "cni", source: cni.source },
    ])
    : configured;
  await source.start((snap) => engine.apply(snap));
  await runtime.startEnvoy();
  return {
    ...runtime,
    engine,
    snapshots,
    metrics,
    status,
    close: async (c) => {
      // Asked while the CNI server and the source stop: no pod is captured anew after those.
      const verdict = uninstalling?.().catch((e): UninstallVerdict => ({
        uninstalling: false,
        known: false,
        reason: String(e),
      }));
      await cni?.close();
      await source.stop();
      // The pods' tables stay (an agent that stops never takes the capture with it) unless aether
      // is being uninstalled.
      const v = await verdict;
      if (capture && v) {
        const log = logger.child("capture");
        if (!v.known) {
          log.warn("cannot tell whether aether is being uninstalled: leaving the pods' tables", {
            reason: v.reason,
          });
        }
        if (v.uninstalling) {
          const { removed, failed } = capture.removeAll();
          log.info("aether is being uninstalled: pods' tables removed", {
            reason: v.reason,
            removed: removed.length,
            failed,
          });
        } else log.info("pods' tables left in place", { reason: v.reason });
      }
      capture?.close();
      identities?.close();
      own?.close();
      await runtime.close(c);
    },
  };
}
