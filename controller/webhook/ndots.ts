/**
 * The pod-ndots mutation — pure: a Pod (as the API server sends it for CREATE) in, a JSONPatch
 * out, or the reason it is left alone.
 *
 * Why: the kubelet writes `options ndots:5` into a ClusterFirst pod's resolv.conf, so a name with
 * fewer than five dots goes through the search list (`<ns>.svc.cluster.local`, `svc.cluster.local`,
 * `cluster.local`, …) before it is tried as given. The mesh name `<svc>.aether.internal` has two
 * dots. glibc tries the search list and, when all fail, the name as given — three wasted round
 * trips per address family. musl (Alpine) is worse: it stops at the first search-list answer that
 * is not NXDOMAIN, so a SERVFAIL or NODATA from one suffixed name (a timeout of the cluster DNS, a
 * wildcard zone) fails the mesh name outright. With `ndots:2` both try a two-dot name as given
 * first: glibc falls back to the search list after it, musl does not search at all (musl searches
 * only names with fewer dots than ndots). Names with one dot or none — `svc`, `svc.ns`, the forms
 * Kubernetes documents — still search first, in both. The cost: under musl a two-dot *relative*
 * name (`svc.ns.svc`, `pod.subdomain.ns`) is tried only as given and no longer resolves; glibc
 * still finds it after one extra query. A pod that needs those sets its own `ndots` and is left
 * alone. (Istio's and Linkerd's DNS proxies leave ndots to the user; GKE and others recommend
 * lowering it for the same search-list cost.)
 *
 * Left alone: a `dnsPolicy` other than ClusterFirst (Default, None, ClusterFirstWithHostNet keep
 * their resolver), host-network pods (ClusterFirst means Default for them: the node's resolver),
 * a pod that sets `ndots` itself, and the excluded namespaces.
 * @module
 */

/** One RFC 6902 operation (only `add` is produced). */
export interface JsonPatchOp {
  op: "add";
  path: string;
  value: unknown;
}

/** What to do with one Pod. */
export type NdotsDecision =
  | { patch: JsonPatchOp[] }
  | { skip: string }
  | { invalid: string };

/** The mutation's settings. */
export interface NdotsOptions {
  /** The ndots value written (default {@link DEFAULT_NDOTS}). */
  ndots?: number;
  /** Namespaces whose pods are never mutated (kube-system and aether's own). */
  excludedNamespaces: readonly string[];
}

/** The value written: the mesh name `<svc>.<meshDomain>` has two dots (see the module doc). */
export const DEFAULT_NDOTS = 2;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The JSONPatch that sets `ndots` on `pod` in `namespace`, or why it is not set. */
export function podNdotsPatch(pod: unknown, namespace: string, opts: NdotsOptions): NdotsDecision {
  const ndots = String(opts.ndots ?? DEFAULT_NDOTS);
  if (opts.excludedNamespaces.includes(namespace)) {
    return { skip: `namespace ${namespace} excluded` };
  }
  if (!isObject(pod) || !isObject(pod.spec)) return { invalid: "the object has no pod spec" };
  const spec = pod.spec;
  const policy = spec.dnsPolicy ?? "ClusterFirst";
  if (policy !== "ClusterFirst") return { skip: `dnsPolicy ${String(policy)}` };
  if (spec.hostNetwork === true) return { skip: "host network (the node's resolver)" };
  const config = spec.dnsConfig;
  if (config !== undefined && config !== null && !isObject(config)) {
    return { invalid: "spec.dnsConfig is not an object" };
  }
  const options = isObject(config) ? config.options : undefined;
  if (options !== undefined && options !== null && !Array.isArray(options)) {
    return { invalid: "spec.dnsConfig.options is not a list" };
  }
  if (Array.isArray(options) && options.some((o) => isObject(o) && o.name === "ndots")) {
    return { skip: "the pod sets ndots itself" };
  }
  const option = { name: "ndots", value: ndots };
  if (!isObject(config)) {
    return { patch: [{ op: "add", path: "/spec/dnsConfig", value: { options: [option] } }] };
  }
  if (!Array.isArray(options)) {
    return { patch: [{ op: "add", path: "/spec/dnsConfig/options", value: [option] }] };
  }
  return { patch: [{ op: "add", path: "/spec/dnsConfig/options/-", value: option }] };
}
