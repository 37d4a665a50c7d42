/**
 * Who is who in the mesh, from Pod objects: the SPIFFE ID scheme (default
 * `spiffe://<td>/ns/<ns>/sa/<sa>`, configurable), each endpoint's expected identity (its pod's
 * service account, by pod IP), the Services that opted in to plaintext for endpoints without one,
 * and the identities a node's pods need from SPIRE (with their selectors). Pure.
 * @module
 */
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { MeshIR, NodePod } from "../../lib/ir/mod.ts";
import type { IRCluster, IREndpoint } from "../../lib/ir/mod.ts";
import { IdentityMemo } from "../../lib/memo/mod.ts";
import type { WantedIdentity } from "./node_identities.ts";
import { checkTrustDomain, parseSpiffeId } from "./svid.ts";
import { CAPTURE_ANNOTATION } from "../../cni/mod.ts";
import { DEFAULT_ID_TEMPLATE, spiffeIdFor } from "../xds/translate/mod.ts";

export { DEFAULT_ID_TEMPLATE };

/** Service annotation: `allow` lets endpoints without an identity be dialled in plaintext. */
export const PLAINTEXT_ANNOTATION = "aether.io/mesh-plaintext";

/**
 * Whether a Pod is outside the mesh: on the node's network, opted out of capture
 * (`aether.io/capture: "false"`) or in one of the `outside` namespaces. No node proxy captures it
 * or serves a :15008 for it.
 */
export function outsideMesh(o: KubeObject, outside: readonly string[] = []): boolean {
  if (o.spec?.hostNetwork === true) return true;
  if (outside.includes(o.metadata.namespace ?? "default")) return true;
  const a = o.metadata.annotations as Record<string, string> | undefined;
  return a?.[CAPTURE_ANNOTATION] === "false";
}

/** The SPIFFE ID scheme of a mesh, and who is outside it. */
export interface IdentityScheme {
  trustDomain: string;
  /** With `{td}`, `{ns}` and `{sa}`; must produce `spiffe://<trustDomain>/…`. */
  template: string;
  /**
   * Namespaces whose pods are outside the mesh (never captured, no :15008 served for them: the
   * capture's excluded namespaces and aether's own): their endpoints are dialled as they are.
   */
  outsideNamespaces?: readonly string[];
}

/** A checked scheme: throws saying what is wrong with the trust domain or the template. */
export function identityScheme(
  trustDomain: string,
  template = DEFAULT_ID_TEMPLATE,
  outsideNamespaces: readonly string[] = [],
): IdentityScheme {
  checkTrustDomain(trustDomain);
  if (!template.includes("{ns}") || !template.includes("{sa}")) {
    throw new Error(`SPIFFE ID template "${template}" must contain {ns} and {sa}`);
  }
  const sample = spiffeIdOf({ trustDomain, template }, "ns", "sa");
  if (parseSpiffeId(sample).trustDomain !== trustDomain) {
    throw new Error(`SPIFFE ID template "${template}" must stay in trust domain ${trustDomain}`);
  }
  return { trustDomain, template, ...(outsideNamespaces.length ? { outsideNamespaces } : {}) };
}

/** The SPIFFE ID of a service account under the scheme. */
export function spiffeIdOf(s: IdentityScheme, namespace: string, serviceAccount: string): string {
  return spiffeIdFor(s.template, s.trustDomain, namespace, serviceAccount);
}

/** The selectors a pod identity is subscribed with (and registered under in SPIRE). */
export function identitySelectors(namespace: string, serviceAccount: string) {
  return [{ type: "k8s", value: `ns:${namespace}` }, {
    type: "k8s",
    value: `sa:${serviceAccount}`,
  }];
}

/** The identities the node's pods have, one per (namespace, service account), sorted. */
export function wantedIdentities(pods: readonly NodePod[], s: IdentityScheme): WantedIdentity[] {
  const out = new Map<string, WantedIdentity>();
  for (const p of pods) {
    const sa = p.serviceAccount ?? "default";
    const id = spiffeIdOf(s, p.namespace, sa);
    out.set(id, { spiffeId: id, selectors: identitySelectors(p.namespace, sa) });
  }
  return [...out.values()].sort((a, b) => a.spiffeId < b.spiffeId ? -1 : 1);
}

/**
 * Pod IP → SPIFFE ID for every pod (any node) in the mesh that has an IP and is not finished.
 * Outside the mesh, so left out (dialled as they are, like an address outside the cluster): pods on
 * the node's network (their IP is the node's — the API server's too, on a control-plane node —
 * shared by everything there), pods opted out of capture and pods of the scheme's outside
 * namespaces; no node proxy serves a :15008 for any of them.
 */
export function podIdentities(
  objects: readonly KubeObject[],
  s: IdentityScheme,
): Map<string, string> {
  const out = new Map<string, string>();
  for (const o of objects) {
    if (o.kind !== "Pod" || o.apiVersion !== "v1") continue;
    const st = o.status as { phase?: string; podIP?: string } | undefined;
    if (!st?.podIP || st.phase === "Succeeded" || st.phase === "Failed") continue;
    if (outsideMesh(o, s.outsideNamespaces)) continue;
    const ns = o.metadata.namespace ?? "default";
    const sa = (o.spec?.serviceAccountName as string | undefined) || "default";
    out.set(st.podIP, spiffeIdOf(s, ns, sa));
  }
  return out;
}

/**
 * The IPs of the running pods {@link podIdentities} leaves out as outside the mesh (not those of
 * mesh pods): their endpoints are dialled in plaintext (IREndpoint.outsideMesh).
 */
export function outsideMeshPods(objects: readonly KubeObject[], s: IdentityScheme): Set<string> {
  const out = new Set<string>();
  for (const o of objects) {
    if (o.kind !== "Pod" || o.apiVersion !== "v1") continue;
    const st = o.status as { phase?: string; podIP?: string } | undefined;
    if (!st?.podIP || st.phase === "Succeeded" || st.phase === "Failed") continue;
    if (outsideMesh(o, s.outsideNamespaces)) out.add(st.podIP);
  }
  return out;
}

/**
 * Services always dialled as they are: the API server's (`default/kubernetes`) is never a mesh
 * pod and has its own TLS; a captured pod's call to it must pass (docs/identity.md).
 */
export const PLAINTEXT_ALWAYS = ["default/kubernetes"] as const;

/**
 * `<ns>/<name>` of the Services annotated `aether.io/mesh-plaintext: allow`, and the
 * {@link PLAINTEXT_ALWAYS} ones.
 */
export function plaintextServices(objects: readonly KubeObject[]): Set<string> {
  const out = new Set<string>(PLAINTEXT_ALWAYS);
  for (const o of objects) {
    if (o.kind !== "Service" || o.apiVersion !== "v1") continue;
    const a = o.metadata.annotations as Record<string, string> | undefined;
    if (a?.[PLAINTEXT_ANNOTATION] === "allow") {
      out.add(`${o.metadata.namespace ?? "default"}/${o.metadata.name}`);
    }
  }
  return out;
}

/**
 * What {@link withIdentities} made of one input cluster, and what it looked up for each endpoint
 * (its identity, else whether it is outside the mesh): valid while every look-up gives the same.
 */
interface Decorated {
  input: IRCluster;
  plain: boolean;
  /** Per input endpoint: its identity, `true` (outside the mesh) or `false` (neither). */
  seen: (string | boolean)[];
  out: IRCluster;
}

/**
 * What {@link withIdentities} remembers between calls (one per owner: an edge's identity hook, a
 * node's sink): by the input cluster's endpoints array (resolve keeps an unchanged cluster's),
 * then its name. A cluster whose endpoints array, endpoint identities and plaintext opt-in are
 * unchanged keeps its decorated endpoints array, identities array and (same input object) the
 * decorated cluster itself, so translation keeps its ClusterLoadAssignment and encoding skips it.
 */
export class IdentityDecorations {
  readonly memo = new IdentityMemo<IREndpoint[], Map<string, Decorated>>();
}

function lookup(
  e: IREndpoint,
  ids: ReadonlyMap<string, string>,
  outside: ReadonlySet<string>,
): string | boolean {
  return ids.get(e.address) ?? outside.has(e.address);
}

function decorate(
  c: IRCluster,
  ids: ReadonlyMap<string, string>,
  plain: ReadonlySet<string>,
  outside: ReadonlySet<string>,
  memo?: IdentityDecorations,
): IRCluster {
  // Datagrams go to the endpoint's own port in plaintext: no identity, no :15008.
  if (c.udp) return c;
  const plaintext = plain.has(c.service);
  const byName = memo?.memo.peek(c.endpoints);
  const last = byName?.get(c.name);
  const same = last !== undefined &&
    c.endpoints.every((e, i) => last.seen[i] === lookup(e, ids, outside));
  memo?.memo.count(same);
  if (same && last.input === c && last.plain === plaintext) return last.out;
  const seen = same ? last.seen : c.endpoints.map((e) => lookup(e, ids, outside));
  const endpoints = same ? last.out.endpoints : c.endpoints.map((e, i) => {
    const s = seen[i];
    if (typeof s === "string") return { ...e, identity: s };
    return s ? { ...e, outsideMesh: true } : e;
  });
  const identities = same
    ? last.out.identities
    : [...new Set(endpoints.flatMap((e) => e.identity ? [e.identity] : []))].sort();
  const out: IRCluster = {
    ...c,
    endpoints,
    identities,
    ...(plaintext ? { plaintextAllowed: true } : {}),
    ...(seen.includes(true) ? { outsideMeshEndpoints: true } : {}),
  };
  if (memo) {
    if (byName) byName.set(c.name, { input: c, plain: plaintext, seen, out });
    else memo.memo.set(c.endpoints, new Map([[c.name, { input: c, plain: plaintext, seen, out }]]));
  }
  return out;
}

/**
 * The mesh (or edge IR) with every endpoint's expected identity, the endpoints of pods `outside`
 * the mesh ({@link outsideMeshPods}) and the plaintext opt-ins filled in (the mesh's namespaced
 * clusters too: their pods' inbound chains need the identities). With `memo`, an unchanged
 * cluster comes out as the same objects as last time ({@link IdentityDecorations}).
 */
export function withIdentities<T extends Pick<MeshIR, "clusters" | "namespacedClusters">>(
  mesh: T,
  ids: ReadonlyMap<string, string>,
  plain: ReadonlySet<string>,
  outside: ReadonlySet<string> = new Set(),
  memo?: IdentityDecorations,
): T {
  const all = (list: readonly IRCluster[]) =>
    list.map((c) => decorate(c, ids, plain, outside, memo));
  const namespaced = mesh.namespacedClusters;
  return {
    ...mesh,
    clusters: all(mesh.clusters),
    ...(namespaced ? { namespacedClusters: all(namespaced) } : {}),
  };
}
