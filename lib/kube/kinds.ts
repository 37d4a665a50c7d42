/**
 * The kinds the pipeline reads from the API server: where each lives (group, versions, plural:
 * the kind catalogue's, lib/gatewayapi/catalogue), whether a CRD gates it, and how an object is
 * trimmed before it is kept.
 * @module
 */
import type { SourceObject } from "../source/mod.ts";
import {
  CATALOGUE,
  type CatalogueKind,
  catalogueKind,
  isCoreKind,
  MESH_KINDS,
  readKinds,
  watchVersions,
} from "../gatewayapi/catalogue/mod.ts";

/** The Gateway API group. */
export const GATEWAY_API_GROUP = "gateway.networking.k8s.io";

/** A kind aether can list and watch. */
export interface KindSpec {
  kind: string;
  /** API group; "" = core. */
  group: string;
  /** Versions aether reads, most preferred first (for CRDs: the first one the CRD serves). */
  versions: readonly string[];
  plural: string;
  namespaced: boolean;
  /** A CRD must be installed and Established before the kind is watched. */
  crd: boolean;
}

/** The spec of a catalogue entry (a kind not core is a CRD's). */
function specOf(entry: CatalogueKind): KindSpec {
  const { kind, group, plural, namespaced } = entry;
  return {
    kind,
    group,
    versions: watchVersions(entry),
    plural,
    namespaced,
    crd: !isCoreKind(kind),
  };
}

/** The kind spec by kind name, from `catalogue` (default aether's); throws on a kind it lacks. */
export function kindSpec(kind: string, catalogue: readonly CatalogueKind[] = CATALOGUE): KindSpec {
  return specOf(catalogueKind(kind, catalogue));
}

/** The specs of `kinds`, in their order (the order revisions list them). */
export function kindSpecs(
  kinds: readonly string[],
  catalogue: readonly CatalogueKind[] = CATALOGUE,
): KindSpec[] {
  return kinds.map((k) => kindSpec(k, catalogue));
}

/**
 * The default kinds: what the edge and the controller read — the catalogue's read kinds with the
 * route kinds served (the registry's, `ROUTE_KINDS`), but Pods.
 */
export function defaultKinds(routeKinds: readonly { readonly kind: string }[]): string[] {
  return readKinds(routeKinds).filter((k) => k !== "Pod");
}

/** What the controller reads: {@link defaultKinds} and the mesh kinds (it writes XMesh status). */
export function controllerKinds(routeKinds: readonly { readonly kind: string }[]): string[] {
  return [...defaultKinds(routeKinds), ...MESH_KINDS];
}

/** `apiVersion` for a group and version. */
export const apiVersionOf = (group: string, version: string): string =>
  group ? `${group}/${version}` : version;

/** The collection path of a kind at a version: all namespaces, or `namespace`'s only. */
export function collectionPath(spec: KindSpec, version: string, namespace?: string): string {
  const base = spec.group ? `/apis/${spec.group}/${version}` : `/api/${version}`;
  const ns = spec.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${base}${ns}/${spec.plural}`;
}

/** The path of one object (with `/status` when `status` is set). */
export function objectPath(
  spec: KindSpec,
  version: string,
  namespace: string | undefined,
  name: string,
  status = false,
): string {
  const one = `${collectionPath(spec, version, namespace)}/${encodeURIComponent(name)}`;
  return status ? `${one}/status` : one;
}

/**
 * The object as kept: `kind`/`apiVersion` set (list items lack them), managedFields dropped, and a
 * Secret that cannot be a certificate (type other than kubernetes.io/tls) kept without its data.
 */
export function trimObject(
  // deno-lint-ignore no-explicit-any
  raw: any,
  kind: string,
  apiVersion: string,
): SourceObject {
  const { managedFields: _m, ...metadata } = raw.metadata ?? {};
  if (kind === "Pod") return trimPod(raw, apiVersion, metadata);
  const o = { ...raw, apiVersion, kind, metadata };
  if (kind === "Secret" && o.type !== "kubernetes.io/tls") {
    delete o.data;
    delete o.stringData;
  }
  return o as SourceObject;
}

/**
 * A Pod as aether reads it (pods.ts, identities, capture adoption): who it is, where it runs, its
 * service account and address; the rest (containers, conditions, its resourceVersion: most of a
 * Pod's updates) is dropped, as every node may hold every Pod of the cluster, and an update
 * that changes none of what is kept is no change ({@link samePod}).
 */
// deno-lint-ignore no-explicit-any
function trimPod(raw: any, apiVersion: string, meta: any): SourceObject {
  const { resourceVersion: _rv, ...metadata } = meta;
  const spec = raw.spec ?? {}, status = raw.status ?? {};
  const pick = (o: Record<string, unknown>, keys: string[]) =>
    Object.fromEntries(keys.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]));
  return {
    apiVersion,
    kind: "Pod",
    metadata,
    spec: pick(spec, ["nodeName", "serviceAccountName", "hostNetwork"]),
    status: pick(status, ["phase", "podIP", "podIPs"]),
  } as SourceObject;
}

/** Whether two trimmed Pods ({@link trimObject}) hold the same: an update aether can ignore. */
export function samePod(a: SourceObject, b: SourceObject): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** What a CRD says about one kind: the versions it serves, once Established. */
export interface CrdSummary {
  name: string;
  established: boolean;
  served: string[];
}

/** The small part of a CustomResourceDefinition the source needs (schemas are not kept). */
// deno-lint-ignore no-explicit-any
export function summarizeCrd(raw: any): CrdSummary {
  // deno-lint-ignore no-explicit-any
  const conds: any[] = raw?.status?.conditions ?? [];
  return {
    name: String(raw?.metadata?.name ?? ""),
    established: conds.some((c) => c.type === "Established" && c.status === "True"),
    // deno-lint-ignore no-explicit-any
    served: (raw?.spec?.versions ?? []).filter((v: any) => v.served).map((v: any) => v.name),
  };
}

/** The version of `spec` to watch given its CRD, or undefined when it is absent or not ready. */
export function servedVersion(spec: KindSpec, crd: CrdSummary | undefined): string | undefined {
  if (!crd?.established) return undefined;
  return spec.versions.find((v) => crd.served.includes(v));
}

/** The CRD name of a kind (`<plural>.<group>`). */
export const crdName = (spec: KindSpec): string => `${spec.plural}.${spec.group}`;
