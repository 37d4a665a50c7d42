/**
 * The kind catalogue: where every kind aether may read lives in the Kubernetes API (group, served
 * and storage versions, plural, scope) — the CRD kinds generated from the vendored YAML
 * (kinds.gen.ts, `deno task gen-crds`), the core kinds by hand below — and which of them aether
 * reads. Data only, and small: the API-server source (lib/kube), admission and the controller
 * import it without the schema facts or any route conversion code. The route kinds are not listed
 * here: the caller passes the registry's (routes/registry.ts `ROUTE_KINDS`).
 * @module
 */
import type { CatalogueKind } from "./kind.ts";
import { CRD_KINDS } from "./kinds.gen.ts";

export type { CatalogueKind } from "./kind.ts";
export { CRD_KINDS };

/** The core (built-in, not CRD) kinds aether reads, in the order sources list them. */
export const CORE_KINDS: readonly CatalogueKind[] = [
  core("Namespace", "", "namespaces", false),
  core("Service", "", "services"),
  core("EndpointSlice", "discovery.k8s.io", "endpointslices"),
  core("Secret", "", "secrets"),
  // Read by the node role only (the pods a node proxy serves).
  core("Pod", "", "pods"),
];

function core(kind: string, group: string, plural: string, namespaced = true): CatalogueKind {
  return { kind, group, versions: ["v1"], storage: "v1", plural, namespaced };
}

/**
 * The Multi-Cluster Services kinds aether reads (multicluster.x-k8s.io, KEP-1645; not from the
 * vendored Gateway API CRDs, so by hand): ServiceImport, a backendRef and (later) a parentRef.
 * Agents read them only when they are part of a clusterset (`--registry-url`).
 */
export const MCS_CATALOGUE: readonly CatalogueKind[] = [
  {
    kind: "ServiceImport",
    group: "multicluster.x-k8s.io",
    versions: ["v1beta1", "v1alpha1"],
    storage: "v1beta1",
    plural: "serviceimports",
    namespaced: true,
  },
];

/**
 * aether's node-local kinds: objects a node agent's own sources deliver, never stored in or read
 * from the API server (no CRD; the API-server source never lists them, `readKinds` leaves them
 * out), admitted by their envelope only. PodNetwork: the pod network records the CNI plugin
 * reports (agent/capture/cni_source.ts), joined with Pods in lib/gatewayapi/mesh/pods.ts.
 */
export const NODE_LOCAL_KINDS: readonly CatalogueKind[] = [
  {
    kind: "PodNetwork",
    group: "aether.io",
    versions: ["v1alpha1"],
    storage: "v1alpha1",
    plural: "podnetworks",
    namespaced: true,
  },
  // The clusterset registry's endpoints of one imported service (agent/registry_source.ts).
  {
    kind: "ClusterSetEndpoints",
    group: "aether.io",
    versions: ["v1alpha1"],
    storage: "v1alpha1",
    plural: "clustersetendpoints",
    namespaced: true,
  },
];

/** aether's catalogue: the CRD kinds (Gateway API, MCS), the core kinds, the node-local kinds. */
export const CATALOGUE: readonly CatalogueKind[] = [
  ...CRD_KINDS,
  ...MCS_CATALOGUE,
  ...CORE_KINDS,
  ...NODE_LOCAL_KINDS,
];

/** The entry of `kind` in `catalogue`; throws on a kind it does not hold. */
export function catalogueKind(
  kind: string,
  catalogue: readonly CatalogueKind[] = CATALOGUE,
): CatalogueKind {
  const entry = catalogue.find((k) => k.kind === kind);
  if (!entry) {
    throw new Error(`unknown kind ${kind}: the catalogue holds ${catalogue.map((k) => k.kind)}`);
  }
  return entry;
}

/** Whether `kind` is one of the core kinds (not a CRD: no CRD gates it). */
export const isCoreKind = (kind: string): boolean => CORE_KINDS.some((k) => k.kind === kind);

/**
 * The Gateway API kinds aether reads: GatewayClass and Gateway, the route kinds it serves
 * (`routeKinds`: the registry's, or a test's own), ReferenceGrant — in the order sources list
 * them. Every other CRD kind of the catalogue (BackendTLSPolicy, ListenerSet, …) is not read: its
 * objects are reported as of an unsupported kind.
 */
export function gatewayReadKinds(routeKinds: readonly { readonly kind: string }[]): string[] {
  return ["GatewayClass", "Gateway", ...routeKinds.map((k) => k.kind), "ReferenceGrant"];
}

/** Every kind aether reads: {@link gatewayReadKinds}, then the core kinds (Pod last). */
export function readKinds(routeKinds: readonly { readonly kind: string }[]): string[] {
  return [...gatewayReadKinds(routeKinds), ...CORE_KINDS.map((k) => k.kind)];
}

/**
 * The mesh's own object, XMesh (experimental channel): only the controller reads it (it writes
 * its status: the mesh's supported features); the agents have no use for it.
 */
export const MESH_KINDS: readonly string[] = ["XMesh"];

/** The MCS kinds an agent of a clusterset reads besides {@link readKinds}. */
export const MCS_KINDS: readonly string[] = MCS_CATALOGUE.map((k) => k.kind);

/**
 * Every kind resolve admits: {@link readKinds}, the mesh kinds, the MCS kinds, then the
 * node-local kinds.
 */
export function admittedKinds(routeKinds: readonly { readonly kind: string }[]): string[] {
  return [
    ...readKinds(routeKinds),
    ...MESH_KINDS,
    ...MCS_KINDS,
    ...NODE_LOCAL_KINDS.map((k) => k.kind),
  ];
}

/**
 * Versions the API-server source reads where not only the storage version: most preferred first,
 * the first the installed CRD serves is watched. TLSRoute: v1 (stored since v1.5), else the older
 * bundles' v1alpha3, v1alpha2. ReferenceGrant: v1beta1, the version v1.5.1 still stores (and every
 * earlier bundle serves), else v1.
 */
const WATCH_VERSIONS: Readonly<Record<string, readonly string[]>> = {
  TLSRoute: ["v1", "v1alpha3", "v1alpha2"],
  ReferenceGrant: ["v1beta1", "v1"],
};

/** The versions of `entry` a source reads, most preferred first: its storage version by default. */
export function watchVersions(entry: CatalogueKind): readonly string[] {
  return Object.hasOwn(WATCH_VERSIONS, entry.kind) ? WATCH_VERSIONS[entry.kind] : [entry.storage];
}
