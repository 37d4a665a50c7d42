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
import {
  type ObjectStatus,
  type Problem,
  resolve,
  servedRouteKinds,
} from "../../lib/gatewayapi/mod.ts";
import { configSource, type SourceFlags } from "../config_source.ts";
import {
  objectKey,
  type Source,
  type SourceSnapshot,
  type StaleFile,
} from "../../lib/source/types.ts";
import { recordsFromServices } from "../dns/mod.ts";
import { type Runtime, startRuntime } from "../runtime.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { podsOnNode } from "./pods.ts";
import { NodeSnapshots } from "./snapshots.ts";
import {
  type IdentityScheme,
  identityScheme,
  NodeIdentities,
  plaintextServices,
  podIdentities,
  wantedIdentities,
  withIdentities,
  WorkloadApiClient,
} from "../identity/mod.ts";
import { bundleSecret, svidSecret } from "../xds/translate/mtls.ts";

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
}

/** Defaults for `agent node`. */
export const nodeDefaults: Omit<NodeAgentOptions, "config" | "source" | "logger" | "nodeName"> = {
  envoy: "auto",
  adminAddress: "127.0.0.1:15000",
  xdsAddress: "127.0.0.1:18000",
  meshDomain: "aether.internal",
  dnsAddress: "127.0.0.1:18054",
};

/** What `/status` shows for a node agent. */
export interface NodeStatus {
  revision: number;
  objects: ObjectStatus[];
  problems: (Problem & { source?: string })[];
  pods: number;
  dependencies: string[];
  error?: string;
}

/** A running node agent. */
export interface NodeAgent extends Runtime {
  snapshots: NodeSnapshots;
  metrics: Registry;
  status(): NodeStatus;
}

/** Starts the node agent. */
export async function runNode(opts: NodeAgentOptions): Promise<NodeAgent> {
  const logger = opts.logger ?? new Logger("agent");
  const metrics = new Registry();
  const cache = new SnapshotCache();
  const failures = metrics.counter(
    "aether_config_failures_total",
    "Snapshots not served, by stage.",
  );
  const invalid = metrics.counter(
    "aether_xds_invalid_resources_total",
    "Resources left out of a snapshot.",
  );
  let scheme: IdentityScheme | undefined;
  if (opts.spireAdminSocket) {
    if (!opts.trustDomain) throw new Error("--spire-admin-socket needs --trust-domain");
    scheme = identityScheme(opts.trustDomain, opts.spiffeIdTemplate);
  }
  const snapshots = new NodeSnapshots({
    cache,
    translate: scheme && {
      identity: { trustDomain: scheme.trustDomain, template: scheme.template },
    },
    onInvalid: (typeUrl, name, error) => {
      invalid.inc({ type_url: typeUrl });
      logger.error("resource left out of the snapshot", { typeUrl, name, error: String(error) });
    },
  });
  const identities = scheme && new NodeIdentities({
    adminSocket: opts.spireAdminSocket!,
    logger: logger.child("identity"),
    metrics,
    onChange: () =>
      snapshots.setSecrets([
        ...identities!.svids().map(svidSecret),
        ...identities!.bundles().map(bundleSecret),
      ]),
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
  let status: NodeStatus = { revision: 0, objects: [], problems: [], pods: 0, dependencies: [] };
  const runtime = await startRuntime({
    ...opts,
    logger,
    metrics,
    cache,
    nodeId: opts.nodeName,
    envoyCluster: "aether-node",
    delta: true,
    xds: { onDemand: snapshots.onDemand },
    status: () => ({
      config: { ...status, dependencies: snapshots.dependencies(opts.nodeName) ?? [] },
      staleFiles,
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
  });

  let staleFiles: StaleFile[] = [];
  const apply = (snap: SourceSnapshot) => {
    staleFiles = snap.stale ?? [];
    try {
      const result = resolve(snap.objects, {
        meshDomain: opts.meshDomain,
        // From the API server: only kinds whose CRDs are installed, already admitted.
        routeKinds: servedRouteKinds(snap.kinds),
        admitted: snap.admitted,
      });
      const pods = podsOnNode(snap.objects, opts.nodeName);
      const mesh = scheme
        ? withIdentities(
          result.mesh,
          podIdentities(snap.objects, scheme),
          plaintextServices(snap.objects),
        )
        : result.mesh;
      if (scheme && identities!.setWanted(wantedIdentities(pods, scheme))) {
        identities!.o.onChange();
      }
      snapshots.setMesh(mesh);
      snapshots.setView({ nodeId: opts.nodeName, pods, dependencies: [] });
      const originOf = (p: Problem) =>
        snap.origins.get(
          objectKey({ kind: p.kind, metadata: { namespace: p.namespace, name: p.name } }),
        );
      status = {
        revision: snap.revision,
        objects: result.statuses,
        problems: [
          ...snap.problems,
          ...result.problems.map((p) => ({ ...p, source: p.source ?? originOf(p) })),
        ],
        pods: pods.length,
        dependencies: [],
      };
      const services = snap.objects.filter((o) => o.kind === "Service" && o.apiVersion === "v1");
      runtime.dns?.responder.setRecords(recordsFromServices(services, opts.meshDomain));
      logger.info("config applied", {
        revision: snap.revision,
        pods: pods.length,
        services: result.mesh.services.length,
      });
    } catch (e) {
      failures.inc({ stage: "node" });
      status = { ...status, revision: snap.revision, error: (e as Error).message };
      logger.error("config not served; the last good config keeps serving", {
        error: (e as Error).message,
      });
    }
  };
  const source = opts.source ?? configSource(opts, {
    logger,
    metrics,
    nodeName: opts.nodeName,
    keepDir: join(runtime.stateDir, "last-good"),
  });
  await source.start(apply);
  await runtime.startEnvoy();
  return {
    ...runtime,
    snapshots,
    metrics,
    status: () => status,
    close: async (c) => {
      await source.stop();
      identities?.close();
      own?.close();
      await runtime.close(c);
    },
  };
}
