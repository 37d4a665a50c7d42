/**
 * The controller: reads the API server (KubeSource), resolves every source revision with the same
 * `resolve()` the agents use, and — while it holds the leader Lease — writes the status of the
 * GatewayClasses, Gateways and routes it owns (edge and mesh controllerNames). Standbys resolve
 * too, so a new leader starts from a warm state; status writes never hold up anything else.
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import {
  loadCelOnDemand,
  MESH_CONTROLLER_NAME,
  resolve,
  type ResolveOptions,
  ResolveState,
  servedRouteKinds,
} from "../lib/gatewayapi/mod.ts";
import { type KubeClient, KubeSource, LeaderElector } from "../lib/kube/mod.ts";
import type { SourceRevision } from "../lib/source/types.ts";
import { planStatus } from "./status_plan.ts";
import { EdgeReconciler } from "./edge_reconcile.ts";
import type { EdgeOptions } from "./edge.ts";
import { StatusWriter } from "./status_writer.ts";

/** Options of the controller (flag names in docs/kubernetes.md). */
export interface ControllerOptions {
  client: KubeClient;
  /** --controller-name: GatewayClasses claimed (default gateway.aether.io/edge). */
  controllerName: string;
  /** --mesh-controller-name: status entries for Service parents (default gateway.aether.io/mesh). */
  meshControllerName: string;
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
  /** --status-qps, --status-burst. */
  statusQps: number;
  statusBurst: number;
  logger?: Logger;
  metrics?: Registry;
  /** Clock for condition transition times (default: wall clock). */
  now?: () => Date;
  /**
   * --edge-namespace / --edge-image: run each Gateway's edge (Deployment + LoadBalancer Service)
   * and take its addresses from the Service. Unset: no edges, addresses from --gateway-address.
   */
  edge?: EdgeOptions;
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
  statusQps: 20,
  statusBurst: 50,
};

/** A running controller. */
export interface Controller {
  metrics: Registry;
  elector: LeaderElector;
  writer: StatusWriter;
  source: KubeSource;
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

const iso = (d: Date) => d.toISOString().replace(/\.\d+Z$/, "Z");

/** Starts the controller; resolves once the first source revision is planned and the election runs. */
export async function runController(opts: ControllerOptions): Promise<Controller> {
  const logger = opts.logger ?? new Logger("controller");
  const metrics = opts.metrics ?? new Registry();
  const ours = new Set([opts.controllerName, opts.meshControllerName]);
  const isOurs = (name: string) => ours.has(name);
  const source = new KubeSource({ client: opts.client, logger: logger.child("kube"), metrics });
  // The writer and the edges ask who leads; the elector is built after them (its callback uses them).
  const late: { elector?: LeaderElector } = {};
  const writer = new StatusWriter({
    client: opts.client,
    logger: logger.child("status"),
    metrics,
    qps: opts.statusQps,
    burst: opts.statusBurst,
    isLeader: () => late.elector?.isLeader ?? false,
  });
  const resolveDuration = metrics.histogram(
    "aether_controller_resolve_seconds",
    "Time to resolve a source revision and plan its status.",
  );
  const edges = opts.edge
    ? new EdgeReconciler({
      client: opts.client,
      options: opts.edge,
      logger: logger.child("edge"),
      metrics,
      isLeader: () => late.elector?.isLeader ?? false,
    })
    : undefined;
  let last: SourceRevision | undefined;
  let served: { kinds?: readonly string[]; options: ResolveOptions } | undefined;
  // The controller's own resolve memos: its resolves after an edit redo only what changed.
  const resolveState = new ResolveState();
  const apply = (snap: SourceRevision) => {
    last = snap;
    const started = performance.now();
    try {
      if (!served || served.kinds !== snap.kinds) {
        // Route kinds whose CRD is not installed are neither resolved nor advertised.
        served = {
          kinds: snap.kinds,
          options: {
            controllerName: opts.controllerName,
            meshControllerName: opts.meshControllerName,
            bindAddress: opts.gatewayAddress,
            routeKinds: servedRouteKinds(snap.kinds),
            ...edgeResolveOptions(opts.edge),
          },
        };
      }
      const result = resolve(
        snap.objects,
        { ...served.options, admitted: snap.admitted },
        resolveState,
      );
      const now = iso(opts.now?.() ?? new Date());
      const statuses = edges ? edges.reconcile(snap.objects, result.statuses) : result.statuses;
      writer.offer(planStatus(snap.objects, statuses, now, isOurs));
    } catch (e) {
      // A revision reaching a CRD rule without a hand predicate waits for the CEL library.
      const again = () => last && apply(last);
      const cannot = (err: Error) =>
        logger.error("cannot load the CEL library; status not updated", { error: err.message });
      if (loadCelOnDemand(e, resolveState.cel, again, cannot)) return;
      logger.error("resolve failed; status not updated for this source revision", {
        revision: snap.revision,
        error: (e as Error).message,
      });
    } finally {
      resolveDuration.observe((performance.now() - started) / 1000);
    }
  };
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
    onChange: (leader) => {
      if (!leader) return;
      // A new term: plan against what the server holds now, not what an earlier term wrote.
      writer.reset();
      edges?.reset();
      if (last) apply(last);
    },
  });
  late.elector = elector;
  await source.start(apply);
  elector.start();
  return {
    metrics,
    elector,
    writer,
    source,
    status: () => ({
      identity: opts.identity,
      leader: elector.isLeader,
      revision: last?.revision,
      watched: source.watchedKinds,
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
      await edges?.stop();
      await elector.stop(!abandon);
      await source.stop();
    },
  };
}
