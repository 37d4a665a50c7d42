/**
 * The objects of the two-cluster MCS scene (e2e/mcs_clusters.ts), as each cluster's API server
 * would hold them, plus the registry records its registrar would write for them: pods, the
 * exported Service `web` (port 8080 → the echo's 9090) with its EndpointSlice, the ServiceImport
 * `web` with its clusterset VIP Service (what the MCS controller makes in every cluster where the
 * namespace exists) and a Service `front` whose producer route sends to the ServiceImport. Pure.
 * @module
 */
import type { SourceObject } from "../lib/source/mod.ts";
import { endpointRecords, VIP_SERVICE_IMPORT_ANNOTATION, vipServiceName } from "../lib/mcs/mod.ts";
import { netPodObject } from "./identity_harness.ts";
import type { NetPod } from "./netns.ts";

/** The namespace of the scene's services and pods. */
export const NS = "shop";
/** `web`'s port, and the port its echo servers listen on in their pods. */
export const WEB_PORT = 8080, WEB_TARGET = 9090;
/** The clusterset VIP of `web` (the same in both clusters here) and `front`'s cluster IP. */
export const IMPORT_VIP = "10.96.77.10", FRONT_VIP = "10.96.77.20";
/** The clusterset name of `web`. */
export const CLUSTERSET_NAME = `web.${NS}.svc.clusterset.local`;

const port = (p = WEB_PORT) => ({ name: "http", protocol: "TCP", port: p, appProtocol: "http" });

/** A pod of the scene: its netns pod, object name and service account. */
export interface ScenePod {
  pod: NetPod;
  name: string;
  serviceAccount: string;
}

/** The Pod objects of `pods` on `nodeName`. */
export function podObjects(pods: readonly ScenePod[], nodeName: string): SourceObject[] {
  return pods.map((p) => netPodObject(p.pod, NS, p.name, p.serviceAccount, nodeName));
}

/**
 * Service `web` with its EndpointSlice over `backends` (ready, with their Pod as targetRef, so the
 * registrar knows their service accounts); none = a Service without endpoints.
 */
export function webService(backends: readonly ScenePod[], nodeName: string): SourceObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "web", namespace: NS, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: { ports: [{ ...port(), targetPort: WEB_TARGET }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "web-1", namespace: NS, labels: { "kubernetes.io/service-name": "web" } },
      addressType: "IPv4",
      ports: [{ name: "http", protocol: "TCP", port: WEB_TARGET }],
      endpoints: backends.map((b) => ({
        addresses: [b.pod.ip],
        conditions: { ready: true },
        nodeName,
        targetRef: { kind: "Pod", name: b.name, namespace: NS },
      })),
    },
  ];
}

/** The ServiceImport `web` and its clusterset VIP Service, as the MCS controller makes them. */
export function webImport(): SourceObject[] {
  return [
    {
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceImport",
      metadata: { name: "web", namespace: NS },
      spec: { type: "ClusterSetIP", ips: [IMPORT_VIP], ports: [port()] },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name: vipServiceName(NS, "web"),
        namespace: NS,
        annotations: { [VIP_SERVICE_IMPORT_ANNOTATION]: "web" },
        creationTimestamp: "2026-01-01T00:00:00Z",
        labels: { "service.kubernetes.io/service-proxy-name": "aether" },
      },
      spec: { clusterIP: IMPORT_VIP, ports: [port()] },
    },
  ];
}

/** Service `front` (no endpoints of its own) whose producer HTTPRoute sends to ServiceImport web. */
export function frontRoute(): SourceObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "front", namespace: NS, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: { clusterIP: FRONT_VIP, ports: [port()] },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "front", namespace: NS, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        parentRefs: [{ group: "", kind: "Service", name: "front", port: WEB_PORT }],
        rules: [{
          backendRefs: [{
            group: "multicluster.x-k8s.io",
            kind: "ServiceImport",
            name: "web",
            port: WEB_PORT,
          }],
        }],
      },
    },
  ];
}

/**
 * What a cluster's registrar writes for exported `web` over these objects: the registrar's own
 * record function (lib/mcs endpointRecords) on the EndpointSlices and Pods.
 */
export function registrarRecords(
  clusterId: string,
  objects: readonly SourceObject[],
  trustDomain: string,
): Map<string, string> {
  const slices = objects.filter((o) => o.kind === "EndpointSlice");
  const pods = new Map(
    objects.filter((o) => o.kind === "Pod").map((o) => {
      const spec = o.spec as { serviceAccountName?: string };
      const key = `${o.metadata.namespace}/${o.metadata.name}`;
      return [key, {
        namespace: o.metadata.namespace!,
        name: o.metadata.name,
        serviceAccount: spec.serviceAccountName ?? "default",
      }];
    }),
  );
  return endpointRecords(
    clusterId,
    new Set([`${NS}/web`]),
    slices as Parameters<typeof endpointRecords>[2],
    pods,
    trustDomain,
  );
}
