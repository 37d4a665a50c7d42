/**
 * The kinds the pipeline reads from the API server: where each lives (group, versions, plural),
 * whether a CRD gates it, and how an object is trimmed before it is kept.
 * @module
 */
import type { SourceObject } from "../source/types.ts";

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

/** Every kind the source knows, in the order revisions list them. */
export const KIND_SPECS: readonly KindSpec[] = [
  gw("GatewayClass", "gatewayclasses", ["v1"], false),
  gw("Gateway", "gateways", ["v1"]),
  gw("HTTPRoute", "httproutes", ["v1"]),
  gw("GRPCRoute", "grpcroutes", ["v1"]),
  gw("TLSRoute", "tlsroutes", ["v1", "v1alpha3", "v1alpha2"]),
  gw("TCPRoute", "tcproutes", ["v1alpha2"]),
  gw("UDPRoute", "udproutes", ["v1alpha2"]),
  gw("ReferenceGrant", "referencegrants", ["v1beta1", "v1"]),
  core("Namespace", "", "v1", "namespaces", false),
  core("Service", "", "v1", "services"),
  core("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices"),
  core("Secret", "", "v1", "secrets"),
  core("Pod", "", "v1", "pods"),
];

/** The default kinds: what the edge and the controller read. */
export const DEFAULT_KINDS: readonly string[] = KIND_SPECS.filter((k) => k.kind !== "Pod").map((
  k,
) => k.kind);

function gw(kind: string, plural: string, versions: string[], namespaced = true): KindSpec {
  return { kind, group: GATEWAY_API_GROUP, versions, plural, namespaced, crd: true };
}

function core(kind: string, group: string, v: string, plural: string, namespaced = true): KindSpec {
  return { kind, group, versions: [v], plural, namespaced, crd: false };
}

/** The kind spec by kind name; throws on a kind aether does not read. */
export function kindSpec(kind: string): KindSpec {
  const spec = KIND_SPECS.find((k) => k.kind === kind);
  if (!spec) throw new Error(`unknown kind ${kind}: aether reads ${KIND_SPECS.map((k) => k.kind)}`);
  return spec;
}

/** `apiVersion` for a group and version. */
export const apiVersionOf = (group: string, version: string): string =>
  group ? `${group}/${version}` : version;

/** The collection path (all namespaces) of a kind at a version. */
export function collectionPath(spec: KindSpec, version: string): string {
  return spec.group
    ? `/apis/${spec.group}/${version}/${spec.plural}`
    : `/api/${version}/${spec.plural}`;
}

/** The path of one object (with `/status` when `status` is set). */
export function objectPath(
  spec: KindSpec,
  version: string,
  namespace: string | undefined,
  name: string,
  status = false,
): string {
  const base = spec.group ? `/apis/${spec.group}/${version}` : `/api/${version}`;
  const ns = spec.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  return `${base}${ns}/${spec.plural}/${encodeURIComponent(name)}${status ? "/status" : ""}`;
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
  const o = { ...raw, apiVersion, kind, metadata };
  if (kind === "Secret" && o.type !== "kubernetes.io/tls") {
    delete o.data;
    delete o.stringData;
  }
  return o as SourceObject;
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
