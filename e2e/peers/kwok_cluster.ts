/**
 * A cluster's control plane whose one node is kwok's: Debian's etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler (e2e/peers/kube.ts) and kwok managing one Node whose
 * `spec.podCIDR` is given. kwok v0.8.0 takes a pod's IP from its node's `spec.podCIDRs` /
 * `spec.podCIDR` when the node has one (`--cidr` only otherwise), handing out the range's
 * addresses from its first host address up, so a podCIDR inside a CNI bridge's subnet that leaves
 * out the bridge's gateway (e.g. the bridge's upper half, e2e/netns.ts `staticRange`) gives pods
 * addresses a pod runner (e2e/pod_runner.ts) can put on that bridge. kwok fakes the kubelet's
 * API side: pods are Running with their IP as soon as they are bound, but not Ready (aether's
 * kwok/pod-started.yaml stage instead of kwok's pod-ready): their readiness is the pod runner's.
 * @module
 */
import { join } from "node:path";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { installCrds, type Kube, startControllers, startKube } from "./kube.ts";
import { waitFor } from "./proc.ts";

/** A running kwok cluster. */
export interface KwokCluster {
  kube: Kube;
  /** The kwok node's name. */
  nodeName: string;
  /** Its `spec.podCIDR`. */
  podCidr: string;
  /** POSTs `body` to `path`; throws with the API server's answer unless it is 2xx. */
  create(path: string, body: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** Options of {@link startKwokCluster}. */
export interface KwokClusterOptions {
  /** The node's `spec.podCIDR`: where its pods' IPs come from. */
  podCidr: string;
  /** The node's name (default `kwok-node-0`). */
  nodeName?: string;
  /** `--service-cluster-ip-range` (default 10.96.0.0/16). */
  serviceClusterIpRange?: string;
  /** Install the Gateway API (standard channel) and MCS CRDs (default true). */
  crds?: boolean;
  /** Namespaces to create. */
  namespaces?: string[];
}

/** Starts the control plane in `dir` and waits until the kwok node is Ready. */
export async function startKwokCluster(dir: string, o: KwokClusterOptions): Promise<KwokCluster> {
  const nodeName = o.nodeName ?? "kwok-node-0";
  const kube = await startKube(dir, {
    ...(o.serviceClusterIpRange ? { serviceClusterIpRange: o.serviceClusterIpRange } : {}),
  });
  const create = async (path: string, body: unknown) => {
    const res = await kube.request("POST", path, body);
    if (res.status >= 300) {
      throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(res.json)}`);
    }
    return res.json;
  };
  try {
    await startControllers(kube, { processPods: true });
    if (o.crds ?? true) {
      await installCrds(kube, join(await ensurePeer("gateway-api-crds"), "standard"));
      await installCrds(kube, join(await ensurePeer("mcs-api-crds"), "crds"));
    }
    await create("/api/v1/nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: nodeName,
        annotations: { "kwok.x-k8s.io/node": "fake" },
        labels: { "kubernetes.io/hostname": nodeName, type: "kwok" },
      },
      spec: { podCIDR: o.podCidr, podCIDRs: [o.podCidr] },
      status: {
        allocatable: { cpu: "32", memory: "256Gi", pods: "110" },
        capacity: { cpu: "32", memory: "256Gi", pods: "110" },
      },
    });
    await waitFor(
      `${nodeName} Ready`,
      async () => {
        const n = await kube.request("GET", `/api/v1/nodes/${nodeName}`);
        const conds: { type: string; status: string }[] = n.json?.status?.conditions ?? [];
        return conds.some((c) => c.type === "Ready" && c.status === "True") ? true : undefined;
      },
      120_000,
      kube.procs,
    );
    for (const ns of o.namespaces ?? []) {
      await create("/api/v1/namespaces", { metadata: { name: ns } });
    }
    // The API server refuses a pod until its namespace's `default` ServiceAccount exists, which
    // kube-controller-manager creates a moment after the namespace (seen missing on a busy CI run).
    for (const ns of ["default", ...o.namespaces ?? []]) {
      await waitFor(
        `ServiceAccount ${ns}/default`,
        async () => {
          const sa = await kube.request("GET", `/api/v1/namespaces/${ns}/serviceaccounts/default`);
          return sa.status === 200 ? true : undefined;
        },
        120_000,
        kube.procs,
      );
    }
    return { kube, nodeName, podCidr: o.podCidr, create, stop: () => kube.stop() };
  } catch (e) {
    await kube.stop();
    throw e;
  }
}
