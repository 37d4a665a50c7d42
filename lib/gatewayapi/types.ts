/**
 * Kubernetes object shapes that aether reads: Gateway API v1.5.1 (GatewayClass, Gateway, HTTPRoute,
 * GRPCRoute, ReferenceGrant) and their status types. Only the fields aether uses are typed; the
 * validator (validate.ts) knows the full standard-channel schema. Core kinds live in core_types.ts.
 * @module
 */

/** Any Kubernetes object as read from YAML or the API server. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    generation?: number;
    creationTimestamp?: string;
    labels?: Record<string, string>;
    uid?: string;
    [k: string]: unknown;
  };
  // deno-lint-ignore no-explicit-any
  spec?: any;
  [k: string]: unknown;
}

/** Something wrong with one object, naming the field; `source` (a file path) is set by the caller. */
export interface Problem {
  kind: string;
  namespace?: string;
  name: string;
  /** Field path, e.g. `spec.rules[0].matches[1].path.value`; empty for the object as a whole. */
  field: string;
  message: string;
  source?: string;
}

/** The Gateway API group. */
export const GATEWAY_GROUP = "gateway.networking.k8s.io";

/** metav1.Condition as written in every Gateway API status. */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

/** A Kubernetes label selector (matchLabels and matchExpressions). */
export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: {
    key: string;
    operator: "In" | "NotIn" | "Exists" | "DoesNotExist";
    values?: string[];
  }[];
}

/** GatewayClass spec. */
export interface GatewayClassSpec {
  controllerName: string;
  description?: string;
}

/** GatewayClass status. */
export interface GatewayClassStatus {
  conditions: Condition[];
  supportedFeatures: { name: string }[];
}

/** A reference to a Secret (or another certificate object) from a listener. */
export interface SecretObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
}

/** Listener.allowedRoutes. */
export interface AllowedRoutes {
  namespaces?: { from?: "All" | "Same" | "Selector"; selector?: LabelSelector };
  kinds?: RouteGroupKind[];
}

/** A route kind with its group. */
export interface RouteGroupKind {
  group?: string;
  kind: string;
}

/** One Gateway listener. */
export interface Listener {
  name: string;
  hostname?: string;
  port: number;
  protocol: string;
  tls?: {
    mode?: "Terminate" | "Passthrough";
    certificateRefs?: SecretObjectReference[];
    options?: Record<string, string>;
  };
  allowedRoutes?: AllowedRoutes;
}

/** Gateway spec. */
export interface GatewaySpec {
  gatewayClassName: string;
  listeners: Listener[];
  addresses?: { type?: string; value?: string }[];
}

/** Status of one listener. */
export interface ListenerStatus {
  name: string;
  supportedKinds: RouteGroupKind[];
  attachedRoutes: number;
  conditions: Condition[];
}

/** Gateway status. */
export interface GatewayStatus {
  addresses: { type: string; value: string }[];
  conditions: Condition[];
  listeners: ListenerStatus[];
}

/** A route's reference to its parent (Gateway). */
export interface ParentReference {
  group?: string;
  kind?: string;
  namespace?: string;
  name: string;
  sectionName?: string;
  port?: number;
}

/** A reference to a backend object (a Service), as in backendRefs and mirror filters. */
export interface BackendObjectReference {
  group?: string;
  kind?: string;
  name: string;
  namespace?: string;
  port?: number;
}

/** HTTPHeaderFilter: set, add and remove request or response headers. */
export interface HTTPHeaderFilter {
  set?: { name: string; value: string }[];
  add?: { name: string; value: string }[];
  remove?: string[];
}

/** HTTPPathModifier used by redirects and rewrites. */
export interface HTTPPathModifier {
  type: "ReplaceFullPath" | "ReplacePrefixMatch";
  replaceFullPath?: string;
  replacePrefixMatch?: string;
}

/** An HTTPRoute (or GRPCRoute) filter. */
export interface HTTPRouteFilter {
  type: string;
  requestHeaderModifier?: HTTPHeaderFilter;
  responseHeaderModifier?: HTTPHeaderFilter;
  requestRedirect?: {
    scheme?: "http" | "https";
    hostname?: string;
    path?: HTTPPathModifier;
    port?: number;
    statusCode?: number;
  };
  urlRewrite?: { hostname?: string; path?: HTTPPathModifier };
  requestMirror?: {
    backendRef: BackendObjectReference;
    percent?: number;
    fraction?: { numerator: number; denominator?: number };
  };
  extensionRef?: { group: string; kind: string; name: string };
  cors?: unknown;
}

/** A weighted backendRef with its own filters. */
export interface HTTPBackendRef extends BackendObjectReference {
  weight?: number;
  filters?: HTTPRouteFilter[];
}

/** A header or query parameter match. */
export interface HTTPKeyValueMatch {
  type?: "Exact" | "RegularExpression";
  name: string;
  value: string;
}

/** HTTPRouteMatch. */
export interface HTTPRouteMatch {
  path?: { type?: "Exact" | "PathPrefix" | "RegularExpression"; value?: string };
  headers?: HTTPKeyValueMatch[];
  queryParams?: HTTPKeyValueMatch[];
  method?: string;
}

/** HTTPRouteRule. `retry` is experimental in v1.5.1 and accepted anyway. */
export interface HTTPRouteRule {
  name?: string;
  matches?: HTTPRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
  timeouts?: { request?: string; backendRequest?: string };
  retry?: { codes?: number[]; attempts?: number; backoff?: string };
}

/** What attachment needs of a route, whatever its kind: the fields every route spec has. */
export interface RouteSpecCommon {
  parentRefs?: ParentReference[];
  hostnames?: string[];
}

/** HTTPRoute spec. */
export interface HTTPRouteSpec {
  parentRefs?: ParentReference[];
  hostnames?: string[];
  rules?: HTTPRouteRule[];
}

/** GRPCRouteMatch. */
export interface GRPCRouteMatch {
  method?: { type?: "Exact" | "RegularExpression"; service?: string; method?: string };
  headers?: HTTPKeyValueMatch[];
}

/** GRPCRouteRule. */
export interface GRPCRouteRule {
  name?: string;
  matches?: GRPCRouteMatch[];
  filters?: HTTPRouteFilter[];
  backendRefs?: HTTPBackendRef[];
}

/** GRPCRoute spec. */
export interface GRPCRouteSpec {
  parentRefs?: ParentReference[];
  hostnames?: string[];
  rules?: GRPCRouteRule[];
}

/** Status of a route for one parent. */
export interface RouteParentStatus {
  parentRef: ParentReference;
  controllerName: string;
  conditions: Condition[];
}

/** HTTPRoute / GRPCRoute status. */
export interface RouteStatus {
  parents: RouteParentStatus[];
}

/** ReferenceGrant spec (v1beta1). */
export interface ReferenceGrantSpec {
  from: { group: string; kind: string; namespace: string }[];
  to: { group: string; kind: string; name?: string }[];
}

/** A typed view of a KubeObject with a known spec. */
export interface Typed<S> extends KubeObject {
  metadata: KubeObject["metadata"] & { namespace: string };
  spec: S;
}
