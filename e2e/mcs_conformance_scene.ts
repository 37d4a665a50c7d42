/**
 * The objects of the upstream MCS conformance suite's data-path specs (sigs.k8s.io/mcs-api
 * `conformance/`), for the two-cluster harness (e2e/mcs_clusters.ts), pure: Service `hello`
 * (ports `tcp/42` + `udp/42` → the pods' 42, sessionAffinity ClientIP, as `newHelloService`) with
 * its EndpointSlice per cluster that deploys it, and what the MCS controller of each cluster makes
 * of every cluster's ServiceExports — the controller's own plan (controller/mcs planMcs): its
 * registry partition (exports and endpoints) and its ServiceImports with their clusterset VIP
 * Services (each cluster its own VIP, as the KEP allows).
 * @module
 */
import type { SourceObject } from "../lib/source/mod.ts";
import {
  type EndpointSliceShape,
  type ExportRecord,
  parseExportRecord,
  type PodIdentity,
  VIP_SERVICE_IMPORT_ANNOTATION,
  vipServiceName,
} from "../lib/mcs/mod.ts";
import { planMcs } from "../controller/mcs/mod.ts";
import { NS, type ScenePod } from "./mcs_scene.ts";
import { netPodObject } from "./identity_harness.ts";

/** The suite's service name. */
export const HELLO = "hello";
/** `hello.<ns>.svc.clusterset.local`. */
export const HELLO_FQDN = `${HELLO}.${NS}.svc.clusterset.local`;
/** The port every hello pod listens on (the suite's socat). */
export const HELLO_TARGET = 42;

/** A Service port of hello. */
export interface HelloPort {
  name: string;
  protocol: "TCP" | "UDP";
  port: number;
}

/** The suite's `newHelloService` ports. */
export const HELLO_PORTS: readonly HelloPort[] = [
  { name: "tcp", protocol: "TCP", port: 42 },
  { name: "udp", protocol: "UDP", port: 42 },
];

/** What one cluster has of hello in a spec. */
export interface HelloDeployment {
  /** Its hello pods (the Deployment's or StatefulSet's replicas). */
  pods: ScenePod[];
  ports: readonly HelloPort[];
  headless?: boolean;
  /** The ServiceExport's creationTimestamp; absent = not exported. */
  exported?: string;
}

/** One cluster of the spec: its id, node, pods and hello (absent = not deployed). */
export interface SpecCluster {
  id: string;
  nodeName: string;
  pods: ScenePod[];
  hello?: HelloDeployment;
  /** Its clusterset VIP for hello (its controller's IPAM). */
  vip: string;
  /** The local ClusterIP of its own hello Service. */
  clusterIp: string;
}

/** What each cluster's API server holds and its registrar publishes. */
export interface SpecState {
  objects: SourceObject[];
  published: Map<string, string>;
}

/** A creationTimestamp as the API server writes it (seconds). */
export function timestamp(at = new Date()): string {
  return at.toISOString().replace(/\.\d+Z$/, "Z");
}

function podObject(p: ScenePod, nodeName: string): SourceObject {
  const o = netPodObject(p.pod, NS, p.name, p.serviceAccount, nodeName);
  const app = p.name.startsWith(HELLO) ? HELLO : p.name;
  return { ...o, metadata: { ...o.metadata, labels: { app } } };
}

function helloObjects(c: SpecCluster, h: HelloDeployment): SourceObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: HELLO, namespace: NS, creationTimestamp: "2026-01-01T00:00:00Z" },
      spec: {
        ...(h.headless ? { clusterIP: "None" } : { clusterIP: c.clusterIp }),
        selector: { app: HELLO },
        ports: h.ports.map((p) => ({ ...p, targetPort: HELLO_TARGET })),
        sessionAffinity: "ClientIP",
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
      },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        name: `${HELLO}-1`,
        namespace: NS,
        labels: { "kubernetes.io/service-name": HELLO },
      },
      addressType: "IPv4",
      ports: h.ports.map((p) => ({ name: p.name, protocol: p.protocol, port: HELLO_TARGET })),
      endpoints: h.pods.map((p) => ({
        addresses: [p.pod.ip],
        conditions: { ready: true },
        nodeName: c.nodeName,
        targetRef: { kind: "Pod", name: p.name, namespace: NS },
      })),
    },
  ];
}

function plan(c: SpecCluster, registry: readonly ExportRecord[], trustDomain: string) {
  const local = c.hello ? helloObjects(c, c.hello) : [];
  const pods = new Map<string, PodIdentity>(
    c.pods.map((p) => [`${NS}/${p.name}`, {
      namespace: NS,
      name: p.name,
      serviceAccount: p.serviceAccount,
    }]),
  );
  return {
    local,
    plan: planMcs({
      cluster: c.id,
      exports: c.hello?.exported
        ? [{ metadata: { name: HELLO, namespace: NS, creationTimestamp: c.hello.exported } }]
        : [],
      services: local.filter((o) => o.kind === "Service") as Parameters<
        typeof planMcs
      >[0]["services"],
      namespaces: new Set([NS]),
      slices: local.filter((o) => o.kind === "EndpointSlice") as EndpointSliceShape[],
      pods,
      trustDomain,
      registry,
      vipServiceName,
    }),
  };
}

/**
 * Each cluster's objects and registry partition for the spec: every cluster's controller plans
 * with every cluster's published exports (as after the registry has carried them).
 */
export function specStates(clusters: readonly SpecCluster[], trustDomain: string): SpecState[] {
  const first = clusters.map((c) => plan(c, [], trustDomain));
  const registry = first.flatMap(({ plan }) =>
    [...plan.published].filter(([k]) => k.startsWith("exports/")).map(([, v]) =>
      parseExportRecord(v)!
    )
  );
  return clusters.map((c) => {
    const { local, plan: p } = plan(c, registry, trustDomain);
    const imports = p.imports.flatMap((imp): SourceObject[] => {
      const ips = imp.vipService ? [c.vip] : [];
      const importObject: SourceObject = {
        apiVersion: "multicluster.x-k8s.io/v1beta1",
        kind: "ServiceImport",
        metadata: {
          name: imp.name,
          namespace: imp.namespace,
          ...(imp.vipService
            ? { annotations: { "multicluster.kubernetes.io/derived-service": imp.vipService } }
            : {}),
        },
        spec: { ...imp.merged.spec, ips },
        status: { clusters: imp.merged.clusters.map((cluster) => ({ cluster })) },
      };
      if (!imp.vipService) return [importObject];
      return [importObject, {
        apiVersion: "v1",
        kind: "Service",
        metadata: {
          name: imp.vipService,
          namespace: imp.namespace,
          creationTimestamp: "2026-01-01T00:00:00Z",
          labels: { "service.kubernetes.io/service-proxy-name": "aether" },
          annotations: { [VIP_SERVICE_IMPORT_ANNOTATION]: imp.name },
        },
        spec: {
          type: "ClusterIP",
          clusterIP: c.vip,
          clusterIPs: [c.vip],
          ports: imp.merged.spec.ports.map((pt) => ({
            name: pt.name ?? `${pt.protocol.toLowerCase()}-${pt.port}`,
            protocol: pt.protocol,
            port: pt.port,
          })),
        },
      }];
    });
    return {
      objects: [
        ...c.pods.map((p) => podObject(p, c.nodeName)),
        ...local,
        ...imports,
      ],
      published: p.published,
    };
  });
}
