/**
 * aether's intermediate representation: the plain data that `resolve` (Gateway API → IR) produces
 * and `translate` (IR → Envoy resources) consumes. No Kubernetes and no Envoy shapes in here; only
 * what the data plane must do. Every list is sorted deterministically by whoever builds it, so an
 * unchanged input yields an identical IR.
 * @module
 */

/** The whole configuration for one proxy role (for the edge: every programmed Gateway). */
export interface IR {
  /** One entry per bound address:port, sorted by address then port. */
  listeners: IRListener[];
  /** Every backend cluster referenced by a route, sorted by name. */
  clusters: IRCluster[];
  /** TLS certificates referenced by HTTPS listeners, sorted by name. */
  secrets: IRSecret[];
}

/** Gateway listener protocols an IRListener may carry. */
export type IRListenerProtocol = "HTTP" | "HTTPS" | "TLS" | "TCP" | "UDP";

/** A bound socket. Several Gateway listeners on the same port share one IRListener. */
export interface IRListener {
  /** Stable name, `<address>:<port>`, also the Envoy listener name. */
  name: string;
  address: string;
  port: number;
  /**
   * "HTTP" (plaintext HCM), "HTTPS" (TLS termination then HCM), "TLS" (SNI-matched chains:
   * passthrough, or termination then TCP proxy), "TCP" (TCP proxy) or "UDP" (UDP proxy).
   */
  protocol: IRListenerProtocol;
  /**
   * Filter chains, a tagged union on `kind` (translate dispatches on it). For HTTP: exactly one
   * `http` chain, without serverNames. For HTTPS: one `http` chain per Gateway listener
   * (sectionName), matched by SNI `serverNames` (empty = any name, placed last). For TLS: chains
   * matched by SNI the same way. For TCP and UDP: one chain.
   */
  filterChains: IRFilterChain[];
}

/**
 * One listener filter chain: HTTP connection manager | TCP proxy | TLS passthrough by SNI | UDP
 * proxy. A new kind of chain is one more member here and one more case in translate's listener.
 */
export type IRFilterChain =
  | IRHttpFilterChain
  | IRTcpProxyFilterChain
  | IRTlsPassthroughFilterChain
  | IRUdpProxyFilterChain;

/** One HTTP connection manager with its routing table. */
export interface IRHttpFilterChain {
  kind: "http";
  /** Stable name, e.g. `<ns>/<gateway>/<sectionName>` or the listener name for merged HTTP. */
  name: string;
  /** SNI names this chain serves (HTTPS only); wildcard `*.example.com` allowed; empty = any. */
  serverNames: string[];
  /** Certificates (by IRSecret name) served on this chain; HTTPS only. */
  certificateSecrets: string[];
  /** Envoy RouteConfiguration name served over RDS for this chain. */
  routeConfigName: string;
  /** Virtual hosts, most specific domain first: exact hostnames, then wildcards, then `*`. */
  virtualHosts: IRVirtualHost[];
}

/**
 * Bytes of a connection forwarded to weighted backends (TCPRoute; TLSRoute in Terminate mode,
 * then with `certificateSecrets` and SNI `serverNames`). An invalid backend's share is refused.
 */
export interface IRTcpProxyFilterChain {
  kind: "tcpProxy";
  /** Stable name, e.g. `<ns>/<gateway>/<sectionName>`. */
  name: string;
  /** SNI names (TLS Terminate only); empty = any. */
  serverNames: string[];
  /** Certificates terminating TLS before the proxy (TLS Terminate); empty = plaintext TCP. */
  certificateSecrets: string[];
  /** Weighted backends (as IRForwardAction's); non-empty. */
  backends: IRBackend[];
}

/** A TLS connection forwarded by its SNI, never decrypted (TLSRoute on a Passthrough listener). */
export interface IRTlsPassthroughFilterChain {
  kind: "tlsPassthrough";
  /** Stable name, e.g. `<ns>/<gateway>/<sectionName>/<hostname>`. */
  name: string;
  /** SNI names this chain serves; wildcard allowed; empty = any (placed last). */
  serverNames: string[];
  /** Weighted backends; non-empty. */
  backends: IRBackend[];
}

/** Datagrams forwarded to weighted backends (UDPRoute); the listener's only chain. */
export interface IRUdpProxyFilterChain {
  kind: "udpProxy";
  /** Stable name, e.g. `<ns>/<gateway>/<sectionName>`. */
  name: string;
  /** Weighted backends; non-empty. */
  backends: IRBackend[];
  /**
   * The one cluster datagrams go to when several backends carry weight (Envoy's udp_proxy routes
   * to a single cluster): resolve merges the valid backends' endpoints into it, each endpoint
   * weighted so that every backend gets its share of sessions.
   */
  cluster?: string;
}

/** A set of domains with an ordered list of routes. */
export interface IRVirtualHost {
  /** Stable name (unique within its route config). */
  name: string;
  /** Envoy domains: `foo.example.com`, `*.example.com`, or `*`. */
  domains: string[];
  /**
   * Routes in Gateway API precedence order (first match wins). A request matching no route gets
   * 404 from Envoy's default behaviour; translate does not add a catch-all.
   */
  routes: IRRoute[];
}

/** How a string is compared. */
export type IRStringMatchType = "Exact" | "RegularExpression";

/** A header or query parameter condition. */
export interface IRKeyValueMatch {
  /** Header name (lower-cased) or query parameter name (case-sensitive). */
  name: string;
  type: IRStringMatchType;
  value: string;
}

/** All conditions of one match; every condition must hold. */
export interface IRRouteMatch {
  path: { type: "Exact" | "PathPrefix" | "RegularExpression"; value: string };
  headers: IRKeyValueMatch[];
  queryParams: IRKeyValueMatch[];
  /** HTTP method, upper-case, when the match has one. */
  method?: string;
}

/** Header edits (Gateway API HTTPHeaderFilter): set, add and remove. */
export interface IRHeaderModifier {
  /** Overwrite (or create) these headers. */
  set: { name: string; value: string }[];
  /** Append these values (creating the header when absent). */
  add: { name: string; value: string }[];
  /** Remove these header names. */
  remove: string[];
}

/** A backend a request may be forwarded to, with its share of the weight. */
export interface IRBackend {
  /**
   * The IRCluster name. When `invalid` is set this names a cluster that does not exist, and
   * requests given this share are answered 500 (Gateway API: invalid backendRef → 500).
   */
  cluster: string;
  /** Relative weight, ≥ 0. A weight-0 backend gets no traffic. */
  weight: number;
  /** Why the reference is invalid (for debugging); present only for invalid backends. */
  invalid?: string;
  /** Per-backend request header edits (backendRef filters). */
  requestHeaders?: IRHeaderModifier;
  /** Per-backend response header edits (backendRef filters). */
  responseHeaders?: IRHeaderModifier;
}

/** A copy of each request sent to another cluster; the response is ignored. */
export interface IRMirror {
  cluster: string;
  /** Fraction of requests to mirror, 0–100 (may be fractional). Absent = 100. */
  percent?: number;
}

/** Retry policy (HTTPRoute rule `retry`). */
export interface IRRetry {
  /** HTTP status codes that trigger a retry. */
  codes: number[];
  /** Maximum number of retries (attempts beyond the first). */
  attempts: number;
  /** Base back-off in milliseconds, when set. */
  backoffMs?: number;
}

/** Rewrite of the request before forwarding (URLRewrite filter). */
export interface IRURLRewrite {
  hostname?: string;
  /** Replace the whole path, or replace the matched prefix. */
  path?: { type: "ReplaceFullPath"; value: string } | {
    type: "ReplacePrefixMatch";
    value: string;
  };
}

/** Forward to weighted backends. */
export interface IRForwardAction {
  kind: "forward";
  /** Non-empty. When every backend is invalid, resolve emits a `direct` 500 instead. */
  backends: IRBackend[];
  /** Whole-request timeout in ms (rule timeouts.request); 0 = none. */
  timeoutMs?: number;
  /** Per-try timeout in ms (rule timeouts.backendRequest). */
  perTryTimeoutMs?: number;
  retry?: IRRetry;
  mirrors: IRMirror[];
  rewrite?: IRURLRewrite;
  /** Backends speak HTTP/2 (gRPC). Mirrors the clusters' protocol; informational for translate. */
  grpc?: boolean;
}

/** Answer with a redirect (RequestRedirect filter). */
export interface IRRedirectAction {
  kind: "redirect";
  scheme?: string;
  hostname?: string;
  port?: number;
  path?: { type: "ReplaceFullPath"; value: string } | {
    type: "ReplacePrefixMatch";
    value: string;
  };
  /** 301, 302, 303, 307 or 308. */
  statusCode: number;
}

/** Answer directly without a backend (e.g. 500 when every backendRef is invalid). */
export interface IRDirectAction {
  kind: "direct";
  status: number;
  body?: string;
}

/** One route: a single match (a rule with N matches becomes N IRRoutes) and its action. */
export interface IRRoute {
  /**
   * Stable name: `<routeKind>/<ns>/<name>/rule/<i>/match/<j>` (rule name used instead of index when
   * the rule is named).
   */
  name: string;
  match: IRRouteMatch;
  /** Request header edits of the rule (RequestHeaderModifier). */
  requestHeaders?: IRHeaderModifier;
  /** Response header edits of the rule (ResponseHeaderModifier). */
  responseHeaders?: IRHeaderModifier;
  action: IRForwardAction | IRRedirectAction | IRDirectAction;
}

/** An upstream: one Service port, with its endpoints. */
export interface IRCluster {
  /**
   * Stable name, the service's mesh authority: `<svc>.<meshDomain>` for the Service's first port,
   * `<svc>.<meshDomain>:<port>` for any other port (the spec's NewServiceCluster naming).
   */
  name: string;
  /** `<namespace>/<name>` of the Service (for debugging and status). */
  service: string;
  /** Service port number. */
  port: number;
  /** Upstream HTTP protocol: "http1" or "http2" (gRPC, h2c appProtocol). */
  protocol: "http1" | "http2";
  /** Ready endpoints (address + target port), sorted. Served over EDS. */
  endpoints: IREndpoint[];
  /**
   * Every distinct endpoint `identity`, sorted (one upstream mTLS socket each). Set together with
   * the endpoint identities, so a new identity changes the cluster, not only its endpoints.
   */
  identities?: string[];
  /**
   * The Service opted in (annotation `aether.io/mesh-plaintext: allow`) to plaintext for its
   * endpoints without an identity. Without it such endpoints are never dialled in plaintext.
   */
  plaintextAllowed?: boolean;
  /** Some endpoint is `outsideMesh` (the cluster then has a plaintext socket for those). */
  outsideMeshEndpoints?: boolean;
  /**
   * The Service port is UDP: its endpoints are sent datagrams at their own port, in plaintext (no
   * mTLS tunnel carries datagrams), so it never gets endpoint identities.
   */
  udp?: boolean;
  /**
   * The SNI callers send to its endpoints when it is not the mesh's `<port>.<authority>`: a
   * ServiceImport's clusterset VIP Service sends the import's clusterset SNI
   * (`<port>.<svc>.<ns>.svc.clusterset.local`, lib/mcs clustersetSni), the name every exporting
   * cluster's pods and east-west gateways know the Service port by.
   */
  sni?: string;
}

/** One backend address. */
export interface IREndpoint {
  address: string;
  port: number;
  /** Load-balancing weight (≥ 1) relative to the cluster's other endpoints; absent = 1. */
  weight?: number;
  /** Kubernetes zone, when known (locality). */
  zone?: string;
  /**
   * Failover order (Envoy priority): 0, the default, is tried first; a higher one takes traffic
   * only while the lower ones are not healthy enough. A ServiceImport's endpoints in this cluster
   * are 0, those of other clusters 1 (locality first, failover across clusters).
   */
  priority?: number;
  /**
   * The SPIFFE ID the endpoint must present (its pod's service account), when the mesh knows it:
   * the endpoint is then dialled over mTLS at port 15008 and its URI SAN must equal this.
   */
  identity?: string;
  /**
   * The endpoint's pod is known to be outside the mesh (on the node's network, opted out of
   * capture, in an outside namespace): no node proxy serves a :15008 for it, so it is dialled in
   * plaintext at its own port — as Istio and Linkerd dial a pod without a proxy. An endpoint the
   * mesh knows nothing of (no identity, not outside) is never dialled in plaintext unless its
   * Service opts in.
   */
  outsideMesh?: boolean;
  /**
   * Dial this address instead of the endpoint's own (`podIP:15008` for an identity endpoint):
   * another cluster's east-west gateway, which passes the mTLS connection through by its SNI to
   * the pods behind it. The identity check and the SNI stay as they are (TLS is end to end).
   */
  dialAt?: { address: string; port: number };
}

/** A certificate and key, PEM encoded, from a kubernetes.io/tls Secret. */
export interface IRSecret {
  /** Stable name: `<ns>/<secretName>`; also the SDS resource name. */
  name: string;
  certificateChain: string;
  privateKey: string;
}
