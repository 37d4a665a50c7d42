/**
 * Core Kubernetes kinds aether reads: Service, Namespace, Secret (kubernetes.io/tls) and
 * discovery.k8s.io/v1 EndpointSlice. Only the fields aether uses.
 * @module
 */
import type { ClusterSetEndpointEntry } from "../mcs/mod.ts";

/** One Service port. */
export interface ServicePort {
  name?: string;
  port: number;
  targetPort?: number | string;
  protocol?: string;
  appProtocol?: string;
}

/** Service spec. */
export interface ServiceSpec {
  ports?: ServicePort[];
  type?: string;
  clusterIP?: string;
  /** Every cluster IP (dual-stack); `clusterIPs[0]` equals `clusterIP` when both are set. */
  clusterIPs?: string[];
  selector?: Record<string, string>;
}

/** Secret body (type kubernetes.io/tls for certificates). */
export interface SecretBody {
  type?: string;
  /** base64 values. */
  data?: Record<string, string>;
  /** plain values, merged over `data` as the API server does. */
  stringData?: Record<string, string>;
}

/** One endpoint of an EndpointSlice. */
export interface SliceEndpoint {
  addresses: string[];
  conditions?: { ready?: boolean; serving?: boolean; terminating?: boolean };
  zone?: string;
  nodeName?: string;
}

/** EndpointSlice body (top-level fields, no spec). */
export interface EndpointSliceBody {
  addressType?: string;
  endpoints?: SliceEndpoint[];
  ports?: { name?: string; port?: number; protocol?: string; appProtocol?: string }[];
}

/** Label that ties an EndpointSlice to its Service. */
export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** A ServiceImport's spec (multicluster.x-k8s.io, KEP-1645) as resolve reads it. */
export interface ServiceImportSpec {
  type?: string;
  ports?: ServicePort[];
  ips?: string[];
}

/** The kind of the clusterset registry's endpoints of one imported service (node-local). */
export const CLUSTER_SET_ENDPOINTS_KIND = "ClusterSetEndpoints";

/** The spec of a ClusterSetEndpoints object: named as its ServiceImport. */
export interface ClusterSetEndpointsSpec {
  endpoints: ClusterSetEndpointEntry[];
}

/** Label the API server puts on every Namespace. */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";
