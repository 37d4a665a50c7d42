/**
 * The pods a node proxy serves, from Pod objects. In a cluster the CNI plugin reports each pod's
 * network namespace to the node agent; until then (and in the folder-driven node mode) the Pod
 * carries it in the annotation `aether.io/netns-path`. Pure.
 * @module
 */
import type { NodePod } from "../../ir/mod.ts";
import type { KubeObject } from "../types.ts";

/** The annotation that names a pod's network namespace (stand-in for the CNI report). */
export const NETNS_ANNOTATION = "aether.io/netns-path";

/** Pods scheduled on `nodeName` that have a network namespace and are not finished. */
export function podsOnNode(objects: readonly KubeObject[], nodeName: string): NodePod[] {
  const pods: NodePod[] = [];
  for (const o of objects) {
    if (o.kind !== "Pod" || o.apiVersion !== "v1") continue;
    if (o.spec?.nodeName !== nodeName) continue;
    const netnsPath = (o.metadata.annotations as Record<string, string> | undefined)
      ?.[NETNS_ANNOTATION];
    const phase = (o.status as { phase?: string; podIP?: string } | undefined)?.phase;
    if (!netnsPath || phase === "Succeeded" || phase === "Failed") continue;
    const ip = (o.status as { podIP?: string } | undefined)?.podIP;
    pods.push({
      namespace: o.metadata.namespace ?? "default",
      name: o.metadata.name,
      netnsPath,
      ...(ip ? { ip } : {}),
      serviceAccount: (o.spec?.serviceAccountName as string | undefined) || "default",
    });
  }
  return pods.sort((a, b) =>
    a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name)
  );
}
