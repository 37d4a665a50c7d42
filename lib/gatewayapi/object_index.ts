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

/** `<kind>/<namespace>/<name>` of an object. */
const idOf = (o: KubeObject): string => `${o.kind}/${keyOf(o)}`;

/** The sort keys of the age order: creationTimestamp (absent = oldest), then namespace/name. */
const ageOf = (o: KubeObject): { t: string; k: string } => ({
  t: o.metadata.creationTimestamp ?? "",
  k: keyOf(o),
});

/** Gateway API age order: oldest creationTimestamp first (absent = oldest), then namespace/name. */
export function byAge(a: KubeObject, b: KubeObject): number {
  const x = ageOf(a), y = ageOf(b);
  if (x.t !== y.t) return x.t < y.t ? -1 : 1;
  return x.k < y.k ? -1 : x.k > y.k ? 1 : 0;
}

/**
 * A copy of `list` in age order of `objectOf(item)` (the item itself by default), each key
 * computed once rather than per comparison. Stable: equal ages keep their order.
 */
export function sortByAge<T>(
  list: Iterable<T>,
  objectOf: (item: T) => KubeObject = (item) => item as KubeObject,
): T[] {
  const keyed = [...list].map((item) => ({ item, ...ageOf(objectOf(item)) }));
  keyed.sort((a, b) => a.t !== b.t ? (a.t < b.t ? -1 : 1) : a.k < b.k ? -1 : a.k > b.k ? 1 : 0);
  return keyed.map((e) => e.item);
}

/** The last age order one owner computed: its input (ids and objects) and the sorted positions. */
export interface AgeOrderMemo {
  last?: { ids: string[]; objects: KubeObject[]; order: number[] };
  /**
   * `<kind>/<namespace>/<name>` and `<namespace>/<name>` by object: the same strings every
   * resolve, so the Map lookups they are used in keep their hashes.
   */
  names?: IdentityMemo<KubeObject, { id: string; key: string }>;
}

/**
 * The objects of `first` (by id) in age order. When the input has the same ids in the same order
 * as `memo`'s last, each object the same or as old (the same sort keys), the order is the same
 * and is not sorted again: after an edit only the edited object differs.
 */
function ageOrder(first: Map<string, KubeObject>, memo: AgeOrderMemo): KubeObject[] {
  const ids = [...first.keys()];
  const objects = [...first.values()];
  const prev = memo.last;
  if (
    prev && prev.ids.length === ids.length &&
    objects.every((o, i) =>
      o === prev.objects[i] ||
      (ids[i] === prev.ids[i] &&
        o.metadata.creationTimestamp === prev.objects[i].metadata.creationTimestamp)
    )
  ) {
    memo.last = { ids, objects, order: prev.order };
    return prev.order.map((i) => objects[i]);
  }
  const order = sortByAge(objects.keys(), (i) => objects[i]);
  memo.last = { ids, objects, order };
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
  const first = new Map<string, KubeObject>();
  const names = order.names ??= new IdentityMemo();
  const nameOf = (o: KubeObject) => {
    let n = names.peek(o);
    if (n === undefined) names.set(o, n = { id: idOf(o), key: keyOf(o) });
    return n;
  };
  for (const o of objects) {
    const id = nameOf(o).id;
    if (!first.has(id)) {
      first.set(id, o);
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
    keyOf: (o) => nameOf(o).key,
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
  const sorted = ageOrder(first, order);
  for (const o of sorted) {
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
        s.services.set(nameOf(o).key, o as Obj<ServiceSpec>);
        break;
      case "Secret":
        s.secrets.set(nameOf(o).key, o as KubeObject & SecretBody);
        break;
      case "EndpointSlice":
        s.slices.push(o as KubeObject & EndpointSliceBody);
        break;
      case "ServiceImport":
        s.serviceImports.set(nameOf(o).key, o as Obj<ServiceImportSpec>);
        break;
      case "ClusterSetEndpoints":
        s.clusterSetEndpoints.set(nameOf(o).key, o as Obj<ClusterSetEndpointsSpec>);
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
