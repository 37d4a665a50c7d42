/**
 * The controller: the API server (KubeSource) in, the engine the agents run, and one sink that —
 * while this process holds the leader Lease — writes the status of the GatewayClasses, Gateways
 * and routes it owns (edge and mesh controllerNames) and runs each Gateway's edge. Standbys
 * resolve too, so a new leader starts from a warm state; status writes never hold up anything else.
 * With `podWebhook`, every replica (leader or not) also serves the pod-ndots admission webhook.
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { Engine } from "../lib/engine/mod.ts";
import {
  MESH_CONTROLLER_NAME,
  MESH_FEATURES,
  type ResolveOptions,
  ROUTE_KINDS,
} from "../lib/gatewayapi/mod.ts";
import { controllerKinds, type KubeClient, KubeSource, LeaderElector } from "../lib/kube/mod.ts";
import { EdgeReconciler } from "./edge_reconcile.ts";
import type { EdgeOptions } from "./edge.ts";
import { StatusSink } from "./status_sink.ts";
import { STATUS_WRITE_DEFAULTS, StatusWriter } from "./status_writer.ts";
import { type PodWebhook, type PodWebhookOptions, startPodWebhook } from "./webhook/mod.ts";
import { McsController } from "./mcs/mod.ts";
import type { Origin, RegistryKv } from "../lib/registry/mod.ts";

/** Options of the controller (flag names in docs/kubernetes.md). */
export interface ControllerOptions {
  client: KubeClient;
  /** --controller-name: GatewayClasses claimed (default gateway.aether.io/edge). */
  controllerName: string;
  /**
   * --mesh-controller-name: status entries for Service parents and the XMesh objects accepted
   * (default gateway.aether.io/mesh).
   */
  meshControllerName: string;
  /**
   * --transparent-capture: the node agents capture pods' traffic (chart: agent.gamma and
   * transparentCapture), so XMesh status lists the mesh features (MESH_FEATURES); else none.
   */
  transparentCapture?: boolean;
  /** --gateway-address: the address written to Gateway status.addresses. */
  gatewayAddress: string;
  /** --lease-namespace, --lease-name, --identity. */
  leaseNamespace: string;
  leaseName: string;
  identity: string;
  /** --lease-duration, --renew-deadline, --retry-period (ms). */
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** --status-qps, --status-burst, --status-concurrency. */
  statusQps: number;
  statusBurst: number;
  statusConcurrency?: number;
  logger?: Logger;
  metrics?: Registry;
  /** Clock for condition transition times (default: wall clock). */
  now?: () => Date;
  /**
   * --edge-namespace / --edge-image: run each Gateway's edge (Deployment + LoadBalancer Service)
   * and take its addresses from the Service. Unset: no edges, addresses from --gateway-address.
   */
  edge?: EdgeOptions;
  /**
   * --pod-ndots-webhook: serve the pod-ndots mutating webhook (its certificate made and renewed
   * here, the MutatingWebhookConfiguration's caBundle kept current). Unset: no webhook.
   */
  podWebhook?: PodWebhookOptions;
  /**
   * --registry-url, --region, --cluster: this cluster's part of the clusterset (MCS): its
   * ServiceExports go to its origin in the registry, every origin's exports come back as
   * ServiceImports with a local clusterset VIP. Unset: no MCS.
   */
  mcs?: {
    kv: RegistryKv;
    origin: Origin;
    ttlSeconds?: number;
    trustDomain?: string;
    /** This cluster's east-west gateway (`<ip>:<port>`), on every published endpoint. */
    eastWestGateway?: string;
  };
}

/**
 * Features aether implements that the controller's edges do not pass the official suite for:
 * GatewayStaticAddresses (see edgeResolveOptions).
 */
export const EDGE_UNSUPPORTED: readonly string[] = ["GatewayStaticAddresses"];

/**
 * Resolve options with edges: the LoadBalancer's pools are the usable Gateway addresses (any when
 * not given), and every Gateway has its own edge proxy, so no conflicts across Gateways.
 */
export function edgeResolveOptions(edge?: EdgeOptions): Partial<ResolveOptions> {
  if (!edge) return {};
  const pools = edge.addressPools?.length ? edge.addressPools : ["0.0.0.0/0"];
  // GatewayStaticAddresses fails the official suite with edges: the suite reads status.addresses
  // as soon as the conditions carry the new generation, before the LoadBalancer has moved the
  // Service to the new address (docs/kubernetes.md). Not advertised until that is solved.
  return { usableAddresses: pools, gatewayOwnProxies: true, withoutFeatures: EDGE_UNSUPPORTED };
}

/** Defaults of every option but the client and identity. */
export const controllerDefaults = {
  controllerName: "gateway.aether.io/edge",
  meshControllerName: MESH_CONTROLLER_NAME,
  gatewayAddress: "127.0.0.1",
  leaseNamespace: "aether-system",
  leaseName: "aether-controller",
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
  statusQps: STATUS_WRITE_DEFAULTS.qps,
  statusBurst: STATUS_WRITE_DEFAULTS.burst,
  statusConcurrency: STATUS_WRITE_DEFAULTS.concurrency,
};

/** A running controller. */
export interface Controller {
  metrics: Registry;
  engine: Engine;
  elector: LeaderElector;
  writer: StatusWriter;
  source: KubeSource;
  /** The pod-ndots webhook, when enabled. */
  podWebhook?: PodWebhook;
  /** The MCS controller, when the cluster is part of a clusterset. */
  mcs?: McsController;
  /** The `/status` document: leader state, queue, last revision. */
  status(): Record<string, unknown>;
  /**
   * `/readyz`: ready while every watched kind has listed and none has been failing to list/watch
   * for {@link READY_FAILING_MS} (the API server away: status cannot be written). Leadership is
   * not part of it: a standby is ready to take over.
   */
  ready(): { ready: boolean; detail: string };
  /** Graceful stop (releases the Lease); `abandon` stops without releasing it (a crash). */
  close(opts?: { abandon?: boolean }): Promise<void>;
}

/** How long a kind's list/watch may fail before `/readyz` says not ready. */
export const READY_FAILING_MS = 30_000;

/** Starts the controller; resolves once the first source revision is planned and the election runs. */
export async function runController(opts: ControllerOptions): Promise<Controller> {
  const logger = opts.logger ?? new Logger("controller");
  const metrics = opts.metrics ?? new Registry();
  const ours = new Set([opts.controllerName, opts.meshControllerName]);
  const source = new KubeSource({
    client: opts.client,
    kinds: controllerKinds(ROUTE_KINDS),
    // Slices tell it only whether its edges' Services have a ready endpoint (Programmed).
    namespaceOf: { EndpointSlice: opts.edge?.namespace ?? opts.leaseNamespace },
    logger: logger.child("kube"),
    metrics,
  });
  const elector = new LeaderElector({
    client: opts.client,
    namespace: opts.leaseNamespace,
    name: opts.leaseName,
    identity: opts.identity,
    leaseDurationMs: opts.leaseDurationMs,
    renewDeadlineMs: opts.renewDeadlineMs,
    retryPeriodMs: opts.retryPeriodMs,
    logger: logger.child("lease"),
    metrics,
  });
  const isLeader = () => elector.isLeader;
  const writer = new StatusWriter({
    client: opts.client,
    logger: logger.child("status"),
    metrics,
    qps: opts.statusQps,
    burst: opts.statusBurst,
    concurrency: opts.statusConcurrency,
    isLeader,
  });
  const edges = opts.edge
    ? new EdgeReconciler({
      client: opts.client,
      options: opts.edge,
      logger: logger.child("edge"),
      metrics,
      isLeader,
    })
    : undefined;
  const statusSink = new StatusSink({ writer, edges, now: opts.now, isOurs: (n) => ours.has(n) });
  const engine = new Engine({
    logger: logger.child("config"),
    metrics,
    resolve: {
      controllerName: opts.controllerName,
      meshControllerName: opts.meshControllerName,
      ...(opts.transparentCapture ? { meshFeatures: MESH_FEATURES } : {}),
      bindAddress: opts.gatewayAddress,
      ...edgeResolveOptions(opts.edge),
    },
    sinks: [statusSink],
    // Status is merged against what the API server holds (status_plan.ts), not shown here; the
    // agents report the problems of what they serve.
    showStatuses: false,
    logProblems: false,
  });
  // Not awaited: the webhook gets its certificate in the background (a pod admitted meanwhile is
  // admitted unchanged: failurePolicy Ignore), and it never holds up status.
  const podWebhook = opts.podWebhook
    ? startPodWebhook(opts.podWebhook, {
      client: opts.client,
      logger: logger.child("webhook"),
      metrics,
    })
    : undefined;
  const mcs = opts.mcs
    ? new McsController({
      client: opts.client,
      kv: opts.mcs.kv,
      origin: opts.mcs.origin,
      ttlSeconds: opts.mcs.ttlSeconds,
      trustDomain: opts.mcs.trustDomain,
      eastWestGateway: opts.mcs.eastWestGateway,
      identity: opts.identity,
      isLeader,
      logger: logger.child("mcs"),
      metrics,
    })
    : undefined;
  // Not awaited: its kinds' CRDs may come later (it lists them with backoff until they do).
  mcs?.start().catch((e) => logger.error("MCS controller failed to start", { error: String(e) }));
  await source.start((snap) => engine.apply(snap));
  elector.start((leader) => {
    mcs?.leadershipChanged();
    if (!leader) return;
    // A new term: plan against what the server holds now, not what an earlier term wrote.
    writer.reset();
    edges?.reset();
    statusSink.reset();
    engine.reapply();
  });
  return {
    metrics,
    elector,
    writer,
    source,
    engine,
    podWebhook,
    mcs,
    status: () => ({
      identity: opts.identity,
      leader: elector.isLeader,
      revision: engine.input?.revision,
      watched: source.watchedKinds,
      ...(engine.status.error ? { error: engine.status.error } : {}),
      ...(podWebhook ? { podNdotsWebhook: podWebhook.status() } : {}),
      ...(mcs ? { mcs: mcs.status() } : {}),
    }),
    ready: () => {
      const bad = source.unhealthyKinds(READY_FAILING_MS);
      return bad.length
        ? {
          ready: false,
          detail: `not ready: the API server does not answer for ${bad.join(", ")}`,
        }
        : { ready: true, detail: "ready: every watched kind is in sync with the API server" };
    },
    close: async ({ abandon = false } = {}) => {
      await writer.stop();
      await podWebhook?.close();
      await edges?.stop();
      await mcs?.stop();
      await elector.stop(!abandon);
      await source.stop();
    },
  };
}
