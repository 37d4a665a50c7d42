/**
 * aether installed with its Helm chart (charts/aether) on the local cluster for the conformance
 * suite: a fresh release from the locally built image, then the GatewayClass Accepted and its
 * `supportedFeatures` read back (what the suite is told to test).
 * @module
 */
import { join } from "node:path";
import { imageNames } from "../cluster/mod.ts";
import { poll } from "../cluster/mod.ts";
import type { Logger } from "../../lib/log/mod.ts";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { run } from "../peers/mod.ts";
import { type Channel, useChannel } from "./channel.ts";

/** The release and namespace the suite's install uses. */
export const release = { name: "aether", namespace: "aether-system", gatewayClass: "aether" };

/** The `helm install` arguments for the local image (pure). */
export function installArgs(kubeconfig: string, addressPool: string): string[] {
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
    `--set=edge.addressPools={${addressPool}}`,
  ];
}

/**
 * Reinstalls the chart (an earlier run's release is uninstalled first), waits for the controller,
 * then for the GatewayClass to be Accepted with its features; returns those features.
 */
export async function installAether(
  kubeconfig: string,
  addressPool: string,
  log: Logger,
  channel: Channel = "standard",
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
  await run(helm, installArgs(kubeconfig, addressPool));
  await k([
    "-n",
    release.namespace,
    "rollout",
    "status",
    "deployment/aether-controller",
    "--timeout=300s",
  ]);
  const features = await poll("GatewayClass Accepted with supportedFeatures", async () => {
    const gc = JSON.parse(await k(["get", "gatewayclass", release.gatewayClass, "-o", "json"]));
    // deno-lint-ignore no-explicit-any
    const accepted = gc.status?.conditions?.find((c: any) => c.type === "Accepted");
    const names = (gc.status?.supportedFeatures ?? []).map((f: { name: string }) => f.name);
    return accepted?.status === "True" && names.length > 0 ? names as string[] : undefined;
  }, 180_000);
  log.info("aether installed", { ms: Date.now() - started, features: features.length });
  return features;
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
