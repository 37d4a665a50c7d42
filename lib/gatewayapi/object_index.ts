/**
 * The objects one resolve works on, indexed by kind and `<namespace>/<name>`, and the Gateway API
 * age order (oldest creationTimestamp first, then `<namespace>/<name>`).
 * @module
 */
import type {
  ClusterSetEndpointsSpec,
  EndpointSliceBody,
  SecretBody,
  ServiceImportSpec,
  ServiceSpec,
} from "./core_types.ts";
import { NAMESPACE_NAME_LABEL } from "./core_types.ts";
import { IdentityMemo } from "../memo/mod.ts";
import type { XMeshSpec } from "./mesh/xmesh.ts";
import type {
  GatewayClassSpec,
  GatewaySpec,
  KubeObject,
  Problem,
  ReferenceGrantSpec,
  RouteSpecCommon,
  Typed,
} from "./types.ts";

/** A namespaced object typed by its spec (`metadata.namespace` is always set after defaulting). */
export type Obj<S = unknown> = Typed<S>;

/** Every object of one resolve, by kind. Lists are in age order. */
export interface ObjectIndex {
  /**
   * {@link keyOf}, remembered per object by the resolver's state: the same string every resolve,
   * so the Map lookups it is used in keep their hash (hot in Backends).
   */
  keyOf(o: KubeObject): string;
  gatewayClasses: Map<string, KubeObject & { spec: GatewayClassSpec }>;
  /** XMesh objects (cluster-scoped) by name. */
  meshes: Map<string, KubeObject & { spec: XMeshSpec }>;
  gateways: Obj<GatewaySpec>[];
  /** Routes by kind, one list (in age order) per kind of the route-kind registry. */
  routes: Map<string, Obj<RouteSpecCommon>[]>;
  grants: Obj<ReferenceGrantSpec>[];
  /** Services by `<ns>/<name>`. */
  services: Map<string, Obj<ServiceSpec>>;
  /** Namespace labels by name (objects absent from the input get only the name label). */
  namespaces: Map<string, Record<string, string>>;
  secrets: Map<string, KubeObject & SecretBody>;
  slices: (KubeObject & EndpointSliceBody)[];
  /** ServiceImports (multicluster.x-k8s.io) by `<ns>/<name>`. */
  serviceImports: Map<string, Obj<ServiceImportSpec>>;
  /** The clusterset registry's endpoints of each imported service, by `<ns>/<name>`. */
  clusterSetEndpoints: Map<string, Obj<ClusterSetEndpointsSpec>>;
}

/** `<namespace>/<name>` of an object (name alone for cluster-scoped ones). */
export function keyOf(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

/** Gateway API age order: oldest creationTimestamp first (absent = oldest), then namespace/name. */
export function byAge(a: KubeObject, b: KubeObject): number {
  const ta = a.metadata.creationTimestamp ?? "", tb = b.metadata.creationTimestamp ?? "";
  if (ta !== tb) return ta < tb ? -1 : 1;
  const ka = keyOf(a), kb = keyOf(b);
  return ka < kb ? -1 : ka > kb ? 1 : 0;
}

/** An item with its age order's sort keys. */
interface Aged<T> {
  item: T;
  t: string;
  k: string;
}

const byKeys = <T>(a: Aged<T>, b: Aged<T>) =>
  a.t !== b.t ? (a.t < b.t ? -1 : 1) : a.k < b.k ? -1 : a.k > b.k ? 1 : 0;

/**
 * A copy of `list` in age order of `objectOf(item)` (the item itself by default), each key
 * computed once rather than per comparison (`key` gives an object's namespace/name). Stable:
 * equal ages keep their order.
 */
export function sortByAge<T>(
  list: Iterable<T>,
  objectOf: (item: T) => KubeObject = (item) => item as KubeObject,
  key: (o: KubeObject) => string = keyOf,
): T[] {
  const keyed: Aged<T>[] = [];
  for (const item of list) {
    const o = objectOf(item);
    keyed.push({ item, t: o.metadata.creationTimestamp ?? "", k: key(o) });
  }
  keyed.sort(byKeys);
  return keyed.map((e) => e.item);
}

/** The last age order one owner computed: its input (objects) and the sorted positions. */
export interface AgeOrderMemo {
  last?: { objects: KubeObject[]; order: number[] };
  /**
   * `<namespace>/<name>` by object: the same string every resolve, so the Map lookups it is used
   * in keep their hash.
   */
  names?: IdentityMemo<KubeObject, string>;
}

/**
 * `objects` (one per kind and key) in age order. When they are as many as `memo`'s last, each
 * the same object or one of the same kind, key and age at its place, the order is the same and
 * is not sorted again: after an edit only the edited object differs.
 */
function ageOrder(
  objects: KubeObject[],
  key: (o: KubeObject) => string,
  memo: AgeOrderMemo,
): KubeObject[] {
  const prev = memo.last;
  const same = (o: KubeObject, p: KubeObject) =>
    o === p || (o.kind === p.kind && key(o) === key(p) &&
      o.metadata.creationTimestamp === p.metadata.creationTimestamp);
  if (
    prev && prev.objects.length === objects.length &&
    objects.every((o, i) => same(o, prev.objects[i]))
  ) {
    memo.last = { objects, order: prev.order };
    return prev.order.map((i) => objects[i]);
  }
  const keyed: Aged<number>[] = new Array(objects.length);
  for (let i = 0; i < objects.length; i++) {
    const o = objects[i];
    keyed[i] = { item: i, t: o.metadata.creationTimestamp ?? "", k: key(o) };
  }
  keyed.sort(byKeys);
  const order = keyed.map((e) => e.item);
  memo.last = { objects, order };
  return order.map((i) => objects[i]);
}

/**
 * Indexes valid, defaulted objects; objects of a kind in `routeKinds` are routes. A second object
 * with the same kind and key is a problem.
 */
export function indexObjects(
  objects: KubeObject[],
  routeKinds: readonly string[],
  order: AgeOrderMemo = {},
): { indexed: ObjectIndex; problems: Problem[] } {
  const problems: Problem[] = [];
  const names = order.names ??= new IdentityMemo();
  const nameOf = (o: KubeObject) => {
    let n = names.peek(o);
    if (n === undefined) names.set(o, n = keyOf(o));
    return n;
  };
  // The first object of each kind and key, in input order.
  const byKind = new Map<string, Set<string>>();
  const first: KubeObject[] = [];
  for (let i = 0; i < objects.length; i++) {
    const o = objects[i];
    const key = nameOf(o);
    let keys = byKind.get(o.kind);
    if (!keys) byKind.set(o.kind, keys = new Set());
    if (!keys.has(key)) {
      keys.add(key);
      first.push(o);
      continue;
    }
    problems.push({
      kind: o.kind,
      ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
      name: o.metadata.name,
      field: "metadata.name",
      message: `duplicate ${o.kind} ${keyOf(o)}: the first one is used, this one is ignored`,
    });
  }
  const s: ObjectIndex = {
    keyOf: nameOf,
    gatewayClasses: new Map(),
    meshes: new Map(),
    gateways: [],
    routes: new Map(routeKinds.map((k) => [k, []])),
    grants: [],
    services: new Map(),
    namespaces: new Map(),
    secrets: new Map(),
    slices: [],
    serviceImports: new Map(),
    clusterSetEndpoints: new Map(),
  };
  const sorted = ageOrder(first, nameOf, order);
  for (let i = 0; i < sorted.length; i++) {
    const o = sorted[i];
    const ns = o.metadata.namespace ?? "";
    if (ns && !s.namespaces.has(ns)) s.namespaces.set(ns, { [NAMESPACE_NAME_LABEL]: ns });
    switch (o.kind) {
      case "GatewayClass":
        s.gatewayClasses.set(o.metadata.name, o as KubeObject & { spec: GatewayClassSpec });
        break;
      case "XMesh":
        s.meshes.set(o.metadata.name, o as KubeObject & { spec: XMeshSpec });
        break;
      case "Gateway":
        s.gateways.push(o as Obj<GatewaySpec>);
        break;
      case "ReferenceGrant":
        s.grants.push(o as Obj<ReferenceGrantSpec>);
        break;
      case "Service":
        s.services.set(nameOf(o), o as Obj<ServiceSpec>);
        break;
      case "Secret":
        s.secrets.set(nameOf(o), o as KubeObject & SecretBody);
        break;
      case "EndpointSlice":
        s.slices.push(o as KubeObject & EndpointSliceBody);
        break;
      case "ServiceImport":
        s.serviceImports.set(nameOf(o), o as Obj<ServiceImportSpec>);
        break;
      case "ClusterSetEndpoints":
        s.clusterSetEndpoints.set(nameOf(o), o as Obj<ClusterSetEndpointsSpec>);
        break;
      case "Namespace":
        s.namespaces.set(o.metadata.name, {
          ...(o.metadata.labels ?? {}),
          [NAMESPACE_NAME_LABEL]: o.metadata.name,
        });
        break;
      default:
        s.routes.get(o.kind)?.push(o as Obj<RouteSpecCommon>);
    }
  }
  return { indexed: s, problems };
}
