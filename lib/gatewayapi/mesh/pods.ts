/**
 * The pods a node proxy serves, from Pod objects joined with the node's PodNetwork records. In a
 * cluster the CNI plugin reports each pod's network namespace and addresses to the node agent,
 * whose CNI source delivers them as PodNetwork objects (`aether.io/v1alpha1`, a kind of the node
 * only: never stored in the API server); a Pod is joined with the record of its UID, else (a
 * record or Pod without one) of its namespace and name. In the folder-driven node mode the Pod
 * carries its namespace in the annotation `aether.io/netns-path` instead. Pure.
 * @module
 */
import type { NodePod } from "../../ir/mod.ts";
import type { KubeObject } from "../types.ts";

/** The annotation that names a pod's network namespace (the folder mode's stand-in for CNI). */
export const NETNS_ANNOTATION = "aether.io/netns-path";

/** The API version of PodNetwork records. */
export const POD_NETWORK_API_VERSION = "aether.io/v1alpha1";

/** The kind of the node's pod network records. */
export const POD_NETWORK_KIND = "PodNetwork";

/** What the CNI plugin reported for a pod's sandbox (a PodNetwork's `spec`). */
export interface PodNetworkSpec {
  /** The pod's UID, when the runtime passed it. */
  podUID?: string;
  /** The sandbox the record is of (`CNI_CONTAINERID`). */
  containerID: string;
  /** The interface the plugin chain configured (`CNI_IFNAME`). */
  ifName: string;
  /** The pod's network namespace. */
  netnsPath: string;
  /** The pod's addresses from the chain's result, without prefix length. */
  ips: string[];
}

/** A PodNetwork record as a source object: named as its pod. */
export function podNetworkObject(
  namespace: string,
  name: string,
  spec: PodNetworkSpec,
): KubeObject {
  return {
    apiVersion: POD_NETWORK_API_VERSION,
    kind: POD_NETWORK_KIND,
    metadata: { namespace, name },
    spec: { ...spec },
  };
}

/** The spec of a PodNetwork object, when it is one with a netns path. */
function recordOf(o: KubeObject): PodNetworkSpec | undefined {
  if (o.kind !== POD_NETWORK_KIND || o.apiVersion !== POD_NETWORK_API_VERSION) return undefined;
  const spec = o.spec as Partial<PodNetworkSpec> | undefined;
  return typeof spec?.netnsPath === "string" && spec.netnsPath !== ""
    ? spec as PodNetworkSpec
    : undefined;
}

/**
 * The network of `pod` among `records`: the record of its UID; else, by namespace and name, a
 * record when it or the Pod has no UID (a record of another UID is another pod of that name).
 */
function networkOf(
  pod: KubeObject,
  byUid: ReadonlyMap<string, PodNetworkSpec>,
  byName: ReadonlyMap<string, PodNetworkSpec>,
): PodNetworkSpec | undefined {
  const uid = pod.metadata.uid;
  if (uid && byUid.has(uid)) return byUid.get(uid);
  const named = byName.get(`${pod.metadata.namespace ?? "default"}/${pod.metadata.name}`);
  return named && (!uid || !named.podUID) ? named : undefined;
}

/**
 * Pods scheduled on `nodeName` that have a network namespace (a PodNetwork record's, else the
 * annotation's) and are not finished. A pod's IP is its `status.podIP`, else its record's first
 * address (the Pod object has none until the kubelet reports the sandbox).
 */
export function podsOnNode(objects: readonly KubeObject[], nodeName: string): NodePod[] {
  const byUid = new Map<string, PodNetworkSpec>();
  const byName = new Map<string, PodNetworkSpec>();
  for (const o of objects) {
    const r = recordOf(o);
    if (!r) continue;
    if (r.podUID) byUid.set(r.podUID, r);
    byName.set(`${o.metadata.namespace ?? "default"}/${o.metadata.name}`, r);
  }
  const pods: NodePod[] = [];
  for (const o of objects) {
    if (o.kind !== "Pod" || o.apiVersion !== "v1") continue;
    if (o.spec?.nodeName !== nodeName) continue;
    const status = o.status as { phase?: string; podIP?: string } | undefined;
    if (status?.phase === "Succeeded" || status?.phase === "Failed") continue;
    const record = networkOf(o, byUid, byName);
    const netnsPath = record?.netnsPath ??
      (o.metadata.annotations as Record<string, string> | undefined)?.[NETNS_ANNOTATION];
    if (!netnsPath) continue;
    const ip = status?.podIP || record?.ips?.[0];
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
