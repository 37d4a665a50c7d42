/**
 * The edge data plane of one Gateway in a cluster (pure): a Deployment running `agent standalone`
 * for that Gateway only (with Envoy), and a Service of type LoadBalancer exposing its listener
 * ports. Whatever LoadBalancer implementation the cluster has (MetalLB, a cloud's) fills the
 * Service's `status.loadBalancer.ingress`; those addresses become the Gateway's
 * `status.addresses`. Both objects live in the controller's namespace (one ServiceAccount, one
 * RBAC grant for every edge), named after the Gateway and labelled with it. The pod template does
 * not depend on the listeners (they reach Envoy over xDS), so a listener edit never rolls the pod;
 * a roll surges and the leaving pod drains.
 * @module
 */
import { createHash } from "node:crypto";
import type { Manifest } from "../lib/kube/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";

/** Where and how edges run. */
export interface EdgeOptions {
  /** Namespace of the edge Deployments and Services (the controller's). */
  namespace: string;
  /** aether's image. */
  image: string;
  /** ServiceAccount of the edge pods (lists/watches what `agent standalone` reads). */
  serviceAccount: string;
  pullPolicy?: string;
  /**
   * Addresses (IPv4 CIDRs or single IPs) the cluster's LoadBalancer can assign; a Gateway asking
   * for another in `spec.addresses` is Programmed=False AddressNotUsable. Empty: any.
   */
  addressPools?: readonly string[];
  /** SPIFFE identity of the edges (the chart's identity): each dials pods over mTLS. */
  identity?: EdgeIdentity;
  /**
   * The clusterset (the controller's `--registry-url`, `--region`, `--cluster`): each edge serves
   * ServiceImport backendRefs from the registry, this cluster's endpoints first.
   */
  clusterset?: { registryUrl: string; region: string; cluster: string };
  /**
   * Each edge's `--scoped-routes-at` (a listener with this many exact hostnames or more is served
   * as a route table per host; 0 = never). Unset: the agent's default.
   */
  scopedRoutesAt?: number;
  /** Each edge's `--scoped-routes-on-demand` (Envoy fetches a host's table on first use). */
  scopedRoutesOnDemand?: boolean;
}

/** Where an edge pod finds its node's SPIRE agent, and its trust domain. */
export interface EdgeIdentity {
  /** Host folder holding the SPIRE agent's Workload API socket `api.sock`. */
  socketDir: string;
  trustDomain: string;
  /** Namespaces whose pods are outside the mesh (`--outside-mesh-namespace` of each edge). */
  outsideNamespaces?: readonly string[];
}

/** The folder an edge container sees the SPIRE agent's sockets in. */
const EDGE_SPIRE_DIR = "/run/spire/agent-sockets";

/**
 * The edge identity from the controller's flags: both or neither (one alone is refused, with
 * what to add).
 */
export function edgeIdentityFlags(
  socketDir: string | undefined,
  trustDomain: string | undefined,
  outsideNamespaces: readonly string[] = [],
): { identity?: EdgeIdentity } {
  if (!socketDir && !trustDomain) return {};
  if (!socketDir || !trustDomain) {
    throw new Error(
      "--edge-spire-socket-dir and --edge-trust-domain go together: give both or neither",
    );
  }
  return {
    identity: {
      socketDir,
      trustDomain,
      ...(outsideNamespaces.length ? { outsideNamespaces } : {}),
    },
  };
}

/** The edge container's identity flags and the pod's socket volume (none without identity). */
function edgeIdentityParts(id: EdgeIdentity | undefined) {
  if (!id) return { args: [], mounts: {}, volumes: {} };
  return {
    args: [
      `--spire-socket=${EDGE_SPIRE_DIR}/api.sock`,
      `--trust-domain=${id.trustDomain}`,
      ...(id.outsideNamespaces ?? []).map((ns) => `--outside-mesh-namespace=${ns}`),
    ],
    mounts: { volumeMounts: [{ name: "spire-agent", mountPath: EDGE_SPIRE_DIR, readOnly: true }] },
    volumes: {
      volumes: [{
        name: "spire-agent",
        hostPath: { path: id.socketDir, type: "DirectoryOrCreate" },
      }],
    },
  };
}

/**
 * V8 flags of an edge pod's agent: a 4 MiB semi-space (V8's default young generation grows to
 * tens of MiB that a control-plane process does not need; the `agent` task runs with the same).
 */
export const EDGE_V8_FLAGS = "--max-semi-space-size=4";

/** How long an edge pod's agent drains its Envoy when the pod leaves (`--shutdown-drain`). */
export const EDGE_SHUTDOWN_DRAIN = "5s";

/** Label naming the Gateway an edge object belongs to (`<namespace>.<name>`). */
export const GATEWAY_LABEL = "gateway.aether.io/gateway";

/** `base` if it fits in 63 characters, else its first 54 and a hash of `namespace/name`. */
function fit63(base: string, namespace: string, name: string): string {
  if (base.length <= 63) return base;
  const hash = createHash("sha256").update(`${namespace}/${name}`).digest("hex").slice(0, 8);
  return `${base.slice(0, 54).replace(/[-.]+$/, "")}-${hash}`;
}

/** The edge objects' name for a Gateway: DNS-label safe, at most 63 characters. */
export function edgeName(namespace: string, name: string): string {
  return fit63(`aether-edge-${namespace}-${name}`, namespace, name);
}

/**
 * The {@link GATEWAY_LABEL} value: `<namespace>.<name>`, hashed down to 63 characters (a label
 * value's limit; longer ones make the API server refuse the Deployment and Service).
 */
export function gatewayLabelValue(namespace: string, name: string): string {
  return fit63(`${namespace}.${name}`, namespace, name);
}

type Listener = { name: string; port: number; protocol: string };

/**
 * The Deployment and Service of one Gateway's edge. With the Gateway's `gatewayClass` (its uid
 * known) both are owned by it: deleting the class — `helm uninstall` does, before the controller
 * could clean up — lets the garbage collector remove the edges. (The Gateway itself cannot own
 * them: it is in another namespace.)
 */
export function edgeResources(
  gateway: SourceObject,
  o: EdgeOptions,
  gatewayClass?: SourceObject,
): Manifest[] {
  const ns = gateway.metadata.namespace ?? "default", gw = gateway.metadata.name;
  const name = edgeName(ns, gw);
  const labels = {
    "app.kubernetes.io/name": "aether-edge",
    [GATEWAY_LABEL]: gatewayLabelValue(ns, gw),
  };
  const uid = gatewayClass?.metadata.uid;
  const owned = typeof uid === "string" && uid
    ? {
      ownerReferences: [{
        apiVersion: gatewayClass!.apiVersion,
        kind: "GatewayClass",
        name: gatewayClass!.metadata.name,
        uid,
      }],
    }
    : {};
  const listeners = (gateway.spec as { listeners?: Listener[] })?.listeners ?? [];
  const ports = [...new Map(listeners.map((l) => [l.port, l])).values()]
    .sort((a, b) => a.port - b.port)
    .map((l) => ({
      name: `p${l.port}`,
      port: l.port,
      targetPort: l.port,
      protocol: l.protocol === "UDP" ? "UDP" : "TCP",
    }));
  const id = edgeIdentityParts(o.identity);
  const addresses = ((gateway.spec as { addresses?: { type?: string; value?: string }[] })
    ?.addresses ?? []).filter((a) => (a.type ?? "IPAddress") === "IPAddress" && a.value)
    .map((a) => a.value!);
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace: o.namespace, labels, ...owned },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        // A roll starts the new pod first; the old one leaves once it is Ready, draining.
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
        template: {
          metadata: { labels },
          spec: {
            serviceAccountName: o.serviceAccount,
            // preStop (5 s) + the agent's shutdown drain (5 s) + a margin.
            terminationGracePeriodSeconds: 30,
            containers: [{
              name: "edge",
              image: o.image,
              imagePullPolicy: o.pullPolicy ?? "IfNotPresent",
              args: [
                "agent/main.ts",
                "standalone",
                "--in-cluster",
                `--gateway=${ns}/${gw}`,
                "--bind-address=$(POD_IP)",
                "--admin-address=$(POD_IP):15000",
                "--dns-address=none",
                "--envoy=auto",
                `--shutdown-drain=${EDGE_SHUTDOWN_DRAIN}`,
                ...(o.scopedRoutesAt === undefined
                  ? []
                  : [`--scoped-routes-at=${o.scopedRoutesAt}`]),
                ...(o.scopedRoutesOnDemand ? ["--scoped-routes-on-demand"] : []),
                ...id.args,
                ...(o.clusterset
                  ? [
                    `--registry-url=${o.clusterset.registryUrl}`,
                    `--region=${o.clusterset.region}`,
                    `--cluster=${o.clusterset.cluster}`,
                  ]
                  : []),
              ],
              env: [
                { name: "POD_IP", valueFrom: { fieldRef: { fieldPath: "status.podIP" } } },
                // V8's young generation kept small: the agent's RSS, not its speed, is what
                // grows with a Gateway's routes (docs/performance.md, issue 21).
                { name: "DENO_V8_FLAGS", value: EDGE_V8_FLAGS },
              ],
              // No container ports: the listeners come over xDS, so a listener added to or
              // removed from the Gateway changes the Service, never the pod.
              // Leaving: first the pod's endpoints go from the Service (kube-proxy stops sending
              // new connections here), then SIGTERM drains Envoy (--shutdown-drain).
              lifecycle: { preStop: { exec: { command: ["/bin/sh", "-c", "sleep 5"] } } },
              readinessProbe: {
                httpGet: { path: "/readyz", port: 15000 },
                periodSeconds: 2,
                timeoutSeconds: 5,
              },
              securityContext: {
                allowPrivilegeEscalation: false,
                capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] },
              },
              ...id.mounts,
            }],
            ...id.volumes,
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: {
        name,
        namespace: o.namespace,
        labels,
        ...owned,
        // spec.addresses honoured the way MetalLB reads it.
        ...(addresses.length
          ? { annotations: { "metallb.io/loadBalancerIPs": addresses.join(",") } }
          : {}),
      },
      spec: {
        type: "LoadBalancer",
        selector: labels,
        ports,
        externalTrafficPolicy: "Local",
      },
    },
  ];
}

/** The addresses a LoadBalancer implementation gave an edge Service (empty: none yet). */
export function loadBalancerAddresses(service: SourceObject | undefined): string[] {
  const ingress =
    (service?.status as { loadBalancer?: { ingress?: { ip?: string; hostname?: string }[] } })
      ?.loadBalancer?.ingress ?? [];
  return ingress.map((i) => i.ip ?? i.hostname ?? "").filter(Boolean);
}

type Cond = { type: string; status: string; reason: string; message: string; [k: string]: unknown };

/** Programmed=True conditions turned False with `reason` and `message` (others unchanged). */
function notProgrammed(conditions: Cond[] | undefined, reason: string, message: string): Cond[] {
  return (conditions ?? []).map((c) =>
    c.type === "Programmed" && c.status === "True" ? { ...c, status: "False", reason, message } : c
  );
}

/**
 * A Gateway status with the edge's addresses: `status.addresses` from the LoadBalancer; while it
 * has none, Programmed=False AddressNotAssigned; while no edge pod is ready behind the Service
 * (`ready`, from its EndpointSlices), Programmed=False Pending — Programmed means traffic to the
 * address is served. Pure; other conditions as resolve computed them.
 */
export function withEdgeAddresses(
  status: unknown,
  addresses: string[],
  service: string,
  ready = true,
): unknown {
  const s = status as { addresses?: unknown; conditions?: Cond[] };
  if (addresses.length > 0) {
    return {
      ...s,
      addresses: addresses.map((value) => ({
        type: /^[\d.:a-fA-F]+$/.test(value) ? "IPAddress" : "Hostname",
        value,
      })),
      ...(ready ? {} : {
        conditions: notProgrammed(
          s.conditions,
          "Pending",
          `waiting for an edge pod behind the Service ${service} to be ready`,
        ),
      }),
    };
  }
  return {
    ...s,
    addresses: [],
    conditions: notProgrammed(
      s.conditions,
      "AddressNotAssigned",
      `waiting for the LoadBalancer Service ${service} to get an address`,
    ),
  };
}
