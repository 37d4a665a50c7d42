/**
 * Where an agent's configuration comes from: a folder or file of YAML (`--config`), or the
 * Kubernetes API server (`--kubeconfig <file>`, or `--in-cluster` for the pod's service account).
 * The Kubernetes client (and its npm package, most of a cold start's module loading) and the route
 * registry are imported only when the API server is the source.
 * @module
 */
import type { Logger } from "../lib/log/mod.ts";
import type { Registry } from "../lib/metrics/mod.ts";
import { MCS_KINDS, readKinds } from "../lib/gatewayapi/catalogue/mod.ts";
import { FileSource } from "../lib/source/files/mod.ts";
import type { Source, SourceObject } from "../lib/source/mod.ts";

/** The source flags of `agent standalone|node`. */
export interface SourceFlags {
  /** --config: folder or file of YAML. */
  config?: string;
  /** --kubeconfig: read from the API server this kubeconfig names. */
  kubeconfig?: string;
  /** --kube-context: the kubeconfig context (default: its current-context). */
  kubeContext?: string;
  /** --in-cluster: read from the API server with the pod's service account. */
  inCluster?: boolean;
  /** --gateway <namespace>/<name>: serve only this Gateway (a per-Gateway edge in a cluster). */
  gateway?: string;
  /**
   * --registry-url, --region, --cluster: this agent is in a clusterset; ServiceImport backends
   * get their endpoints from the registry (this cluster's first).
   */
  registryUrl?: string;
  region?: string;
  cluster?: string;
}

/** What the role reads besides its kinds. */
export interface SourceContext {
  logger: Logger;
  metrics: Registry;
  /** The node role: its Pods only, unless {@link allPods}. */
  nodeName?: string;
  /** Every node's Pods (identity: endpoints' SPIFFE IDs by pod IP); the edge reads them too. */
  allPods?: boolean;
  keepDir?: string;
}

/** A source whose revisions hold only Gateway `key` (`namespace/name`) of all Gateways. */
export function onlyGateway(source: Source, key: string): Source {
  const [namespace, name] = key.split("/");
  return {
    start: (onRevision) =>
      source.start((s) =>
        onRevision({
          ...s,
          objects: s.objects.filter((o) =>
            o.kind !== "Gateway" || (o.metadata.namespace === namespace && o.metadata.name === name)
          ).map((o) => o.kind === "Gateway" ? withoutIpAddresses(o) : o),
        })
      ),
    stop: () => source.stop(),
  };
}

/**
 * The Gateway without its IPAddress `spec.addresses`: an edge binds its pod address and the
 * LoadBalancer Service in front of it carries the addresses the Gateway asked for (the controller
 * requests them and reports whether they are usable). Other address types stay, so a Gateway the
 * controller does not accept is not served either.
 */
function withoutIpAddresses(o: SourceObject): SourceObject {
  const spec = o.spec as { addresses?: { type?: string }[] } | undefined;
  if (!spec?.addresses?.length) return o;
  const addresses = spec.addresses.filter((a) => (a.type ?? "IPAddress") !== "IPAddress");
  return { ...o, spec: { ...spec, addresses } };
}

/**
 * Kinds the node role reads, serving `routeKinds` (the registry's `ROUTE_KINDS`): every kind aether
 * reads but Secrets (its identities come from SPIRE); its Pods included.
 */
export function nodeKinds(routeKinds: readonly { readonly kind: string }[]): string[] {
  return readKinds(routeKinds).filter((k) => k !== "Secret");
}

/** Says what is wrong with the flags (exactly one source), or undefined when they are fine. */
export function sourceFlagsError(f: SourceFlags): string | undefined {
  const n = [f.config, f.kubeconfig, f.inCluster || undefined].filter((v) => v !== undefined)
    .length;
  if (n === 1) return undefined;
  return n === 0
    ? "one of --config <dir|file>, --kubeconfig <file> or --in-cluster is required"
    : "give only one of --config, --kubeconfig and --in-cluster";
}

/**
 * The source the flags name; `nodeName` set = the node role (its Pods only). With a registry, the
 * registry's endpoints are a second partition beside it (origins `config` and `registry`).
 */
export async function configSource(
  f: SourceFlags,
  ctx: SourceContext,
): Promise<Source> {
  if (f.gateway) {
    if (!/^[^/]+\/[^/]+$/.test(f.gateway)) {
      throw new Error(`--gateway must be <namespace>/<name>, got ${JSON.stringify(f.gateway)}`);
    }
    return onlyGateway(await configSource({ ...f, gateway: undefined }, ctx), f.gateway);
  }
  if (f.registryUrl === undefined) {
    if (f.region !== undefined || f.cluster !== undefined) {
      throw new Error("--region and --cluster need --registry-url (the clusterset registry)");
    }
    return await baseSource(f, ctx);
  }
  const [{ EtcdKv, originProblem }, { RegistrySource }, { MergedSource }] = await Promise.all([
    import("../lib/registry/mod.ts"),
    import("./registry_source.ts"),
    import("../lib/engine/mod.ts"),
  ]);
  const origin = { region: f.region ?? "", cluster: f.cluster ?? "" };
  const problem = originProblem(origin);
  if (problem) throw new Error(`--registry-url needs --region and --cluster: ${problem}`);
  return new MergedSource([
    { origin: "config", source: await baseSource(f, ctx) },
    {
      origin: "registry",
      source: new RegistrySource({
        kv: new EtcdKv({ url: f.registryUrl }),
        origin,
        logger: ctx.logger.child("registry"),
        metrics: ctx.metrics,
      }),
    },
  ]);
}

async function baseSource(f: SourceFlags, ctx: SourceContext): Promise<Source> {
  if (!f.kubeconfig && !f.inCluster) {
    return new FileSource({
      path: f.config ?? ".",
      logger: ctx.logger.child("files"),
      keepDir: ctx.keepDir,
    });
  }
  const [{ defaultKinds, KubeClient, KubeSource }, { ROUTE_KINDS }] = await Promise.all([
    import("../lib/kube/mod.ts"),
    import("../lib/gatewayapi/mod.ts"),
  ]);
  const client = new KubeClient(
    f.inCluster ? { inCluster: true } : { kubeconfig: f.kubeconfig!, context: f.kubeContext },
  );
  ctx.logger.info("reading configuration from the API server", { server: client.server });
  // In a clusterset: ServiceImports too (their CRD gates the watch).
  const mcs = f.registryUrl !== undefined ? MCS_KINDS : [];
  return new KubeSource({
    client,
    logger: ctx.logger.child("kube"),
    metrics: ctx.metrics,
    ...(ctx.nodeName
      ? { kinds: [...nodeKinds(ROUTE_KINDS), ...mcs], nodeName: ctx.nodeName }
      : { kinds: [...defaultKinds(ROUTE_KINDS), ...mcs, ...(ctx.allPods ? ["Pod"] : [])] }),
    ...(ctx.allPods ? { allPods: true } : {}),
  });
}
