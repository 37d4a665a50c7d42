/**
 * The types of resolve()'s contract — its options and its result — in a module of their own, so
 * the resolver's state (state/last.ts, the last result the edit path starts from) and resolve
 * itself both import them without importing each other.
 * @module
 */
import type { CatalogueKind } from "./catalogue/mod.ts";
import type { RouteKindDef } from "./routes/kind.ts";
import type { Problem } from "./types.ts";
import type { IR, MeshIR } from "../ir/mod.ts";

/** Options of resolve(). */
export interface ResolveOptions {
  /** GatewayClass controllerName aether claims; default "gateway.aether.io/edge". */
  controllerName?: string;
  /** Address Gateway listeners bind when the Gateway has no spec.addresses; default "127.0.0.1". */
  bindAddress?: string;
  /**
   * Addresses (IPs or IPv4 CIDRs) a Gateway's spec.addresses may name; another one is
   * AddressNotUsable. Default: the bind address and loopback (127.0.0.0/8, ::1).
   */
  usableAddresses?: readonly string[];
  /**
   * Each Gateway is served by its own proxy at its own address (the controller's per-Gateway
   * edges): listeners of different Gateways never conflict, only those of one Gateway do.
   * Default false (one proxy serves every Gateway: conflicts across Gateways per address:port).
   */
  gatewayOwnProxies?: boolean;
  /**
   * Features left out of GatewayClass `supportedFeatures` (where this deployment's data plane does
   * not pass the feature's conformance tests); default none.
   */
  withoutFeatures?: readonly string[];
  /** Mesh domain of cluster names; default "aether.internal". */
  meshDomain?: string;
  /** lastTransitionTime of every condition; default "1970-01-01T00:00:00Z". */
  now?: string;
  /**
   * controllerName of status entries for Service parents (GAMMA), and of the XMesh objects aether
   * accepts; default MESH_CONTROLLER_NAME.
   */
  meshControllerName?: string;
  /**
   * XMesh `supportedFeatures` (MESH_FEATURES where the node agents capture pods' traffic); default
   * none.
   */
  meshFeatures?: readonly string[];
  /** The route kinds served; default the registry ROUTE_KINDS (a test may add its own). */
  routeKinds?: readonly RouteKindDef[];
  /**
   * The kind catalogue (default aether's, catalogue/mod.ts): a test's own route kind brings its
   * entry here, and is admitted by it. Keep it the same across the resolves of one ResolveState
   * (admission is memoized per object).
   */
  catalogue?: readonly CatalogueKind[];
  /**
   * The objects came from the Kubernetes API server, which defaulted and validated them on
   * write: they are not admitted again (objects of a kind or version aether does not know still
   * are, and reported). Default false (files, memory: admitted as the API server would).
   */
  admitted?: boolean;
  /**
   * Build the MeshIR (default true). An edge-only consumer (`agent translate --role edge`) sets
   * false: `mesh` is then empty, and the IR and statuses are the same as with it (mesh routes
   * still get their status; only the per-Service rendering and clusters are skipped).
   */
  mesh?: boolean;
}

/** The computed status of one object, in exactly the Gateway API status shape. */
export interface ObjectStatus {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  status: unknown;
}

/** What resolve() returns. */
export interface ResolveResult {
  ir: IR;
  /** East-west (GAMMA): every mesh Service with its producer and consumer routes per port. */
  mesh: MeshIR;
  statuses: ObjectStatus[];
  problems: Problem[];
}
