/**
 * aether installed with its Helm chart (charts/aether) on the local cluster for the conformance
 * suite: a fresh release from the locally built image with the mesh on (node agents with
 * transparent capture, the chart's XMesh), then the GatewayClass Accepted with its
 * `supportedFeatures` and, on the experimental channel, the XMesh's — what the suite is told to
 * test.
 * @module
 */
import { join } from "node:path";
import { chartNodeValues, imageNames, type Layout } from "../cluster/mod.ts";
import { poll } from "../cluster/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { run } from "../peers/mod.ts";
import { type Channel, useChannel } from "./channel.ts";

/** Namespaces the conformance run does not capture: kube-system and the gateway tests' own. */
export const CAPTURE_EXCLUDED: readonly string[] = [
  "kube-system",
  "gateway-conformance-infra",
  "gateway-conformance-app-backend",
  "gateway-conformance-web-backend",
];

/** The release and namespace the suite's install uses. */
export const release = {
  name: "aether",
  namespace: "aether-system",
  gatewayClass: "aether",
  mesh: "aether",
};

/**
 * The `helm install` arguments for the local image (pure): the edge with its LoadBalancer pool, and
 * the mesh — node agents (agent.gamma) with transparent capture, fitted to the node's CNI folders
 * and cluster DNS.
 */
export function installArgs(kubeconfig: string, layout: Layout, identity = true): string[] {
  const [repository, tag] = imageNames.aether.split(/:(?=[^:]+$)/);
  return [
    "install",
    release.name,
    join(projectRoot, "charts", "aether"),
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${release.namespace}`,
    "--create-namespace",
    `--set=image.repository=${repository}`,
    `--set=image.tag=${tag}`,
    "--set=image.pullPolicy=Never",
    "--set=controller.replicas=1",
    `--set=edge.gatewayClassName=${release.gatewayClass}`,
    `--set=edge.addressPools={${layout.lbCidr}}`,
    "--set=agent.gamma=true",
    "--set=transparentCapture=true",
    `--set=meshName=${release.mesh}`,
    // Identity (SPIRE, mTLS on every in-cluster hop) as the chart's default has it; the backends
    // of the gateway tests sit in the capture-excluded namespaces below, outside the mesh, and
    // are dialled in plaintext as a user's unmeshed pods are.
    `--set=identity.enabled=${identity}`,
    ...chartNodeValues(layout),
    // Capture in the mesh tests' namespaces only, as Istio's run does: the gateway tests' pods
    // never dial out, and on 2 cores their ~25 capture listeners, updated with every Gateway the
    // suite makes (its edge Service is a mesh VIP), only slow the gateway tests down.
    `--set=capture.excludeNamespaces={${CAPTURE_EXCLUDED.join(",")}}`,
  ];
}

/**
 * Reinstalls the chart (an earlier run's release is uninstalled first), waits for the controller
 * and the node agents, then for the GatewayClass to be Accepted with its features and, where the
 * channel serves XMesh, for the XMesh to be Accepted with the mesh's; returns both, merged.
 */
export async function installAether(
  kubeconfig: string,
  layout: Layout,
  log: Logger,
  channel: Channel = "standard",
  identity = true,
): Promise<string[]> {
  const helm = await ensurePeer("helm");
  const kubectl = await ensurePeer("kubectl");
  const k = (args: string[]) => run(kubectl, [`--kubeconfig=${kubeconfig}`, ...args]);
  const started = Date.now();
  // A run killed half-way left its release, its edges or the suite's namespaces: start clean.
  await uninstallAether(kubeconfig);
  await deleteSuiteNamespaces(kubeconfig);
  // helm leaves CRDs that exist alone: the channel set here is the one the run gets.
  await useChannel(kubeconfig, channel, log.child("channel"));
  await run(helm, installArgs(kubeconfig, layout, identity));
  for (
    const what of [
      "deployment/aether-controller",
      "daemonset/aether-agent",
      "daemonset/aether-node-proxy",
    ]
  ) {
    await k(["-n", release.namespace, "rollout", "status", what, "--timeout=300s"]);
  }
  const features = await poll("GatewayClass Accepted with supportedFeatures", async () => {
    const gc = JSON.parse(await k(["get", "gatewayclass", release.gatewayClass, "-o", "json"]));
    return acceptedFeatures(gc);
  }, 180_000);
  const mesh = channel === "experimental"
    ? await poll("XMesh Accepted with supportedFeatures", async () => {
      const m = JSON.parse(await k(["get", "xmesh", release.mesh, "-o", "json"]));
      return acceptedFeatures(m);
    }, 180_000)
    : [];
  log.info("aether installed", {
    ms: Date.now() - started,
    features: features.length,
    meshFeatures: mesh.length,
  });
  return [...new Set([...features, ...mesh])].sort();
}

/**
 * The `status.supportedFeatures` names of a GatewayClass or XMesh once it is Accepted and lists
 * some (pure); undefined before.
 */
export function acceptedFeatures(o: {
  status?: {
    conditions?: { type: string; status: string }[];
    supportedFeatures?: { name: string }[];
  };
}): string[] | undefined {
  const accepted = o.status?.conditions?.find((c) => c.type === "Accepted");
  const names = (o.status?.supportedFeatures ?? []).map((f) => f.name);
  return accepted?.status === "True" && names.length > 0 ? names : undefined;
}

/**
 * Uninstalls the release and waits until its pods are gone, then deletes the edges it leaves: the
 * controller made them, not helm, and they hold tokens of the deleted ServiceAccount. `helm
 * uninstall --wait` alone waits for the Deployment and DaemonSets, not for their pods, which the
 * garbage collector removes later (minutes after an API server restart): the node agents' pods use
 * the node's network, so the next release's would find their ports taken.
 */
export async function uninstallAether(kubeconfig: string): Promise<void> {
  const kubectl = await ensurePeer("kubectl");
  await run(await ensurePeer("helm"), [
    "uninstall",
    release.name,
    `--kubeconfig=${kubeconfig}`,
    `--namespace=${release.namespace}`,
    "--ignore-not-found",
    "--cascade=foreground",
    "--wait",
    "--timeout=5m",
  ]);
  await poll("the release's pods gone", async () => {
    const out = await run(kubectl, [
      `--kubeconfig=${kubeconfig}`,
      ...releasePodsArgs(release.namespace, release.name),
    ]);
    return out.trim() === "" ? true : undefined;
  }, 300_000);
  await run(kubectl, [`--kubeconfig=${kubeconfig}`, ...edgeCleanupArgs(release.namespace)]);
}

/** `kubectl` arguments listing the pods of release `name` (pure). */
export function releasePodsArgs(namespace: string, name: string): string[] {
  return ["-n", namespace, "get", "pods", "-l", `app.kubernetes.io/instance=${name}`, "-o", "name"];
}

/** `kubectl` arguments deleting the edges the controller made in `namespace` (pure). */
export function edgeCleanupArgs(namespace: string): string[] {
  return [
    "-n",
    namespace,
    "delete",
    "deployments,services",
    "-l",
    "app.kubernetes.io/name=aether-edge",
    "--ignore-not-found",
    "--wait",
    "--timeout=180s",
  ];
}

/** Namespaces the suite creates (its base manifests' and its tests'): by name (pure). */
export function isSuiteNamespace(name: string): boolean {
  return name.startsWith("gateway-conformance-") || name.startsWith("gateway-api-");
}

/** Deletes the suite's namespaces an earlier, interrupted run left, and waits until they are gone. */
export async function deleteSuiteNamespaces(kubeconfig: string): Promise<void> {
  const kubectl = await ensurePeer("kubectl");
  const out = await run(kubectl, [`--kubeconfig=${kubeconfig}`, "get", "namespaces", "-o", "name"]);
  const names = out.split("\n").map((l) => l.trim().replace(/^namespace\//, "")).filter(
    isSuiteNamespace,
  );
  if (names.length === 0) return;
  await run(kubectl, [
    `--kubeconfig=${kubeconfig}`,
    "delete",
    "namespaces",
    ...names,
    "--ignore-not-found",
    "--wait",
    "--timeout=300s",
  ]);
}
