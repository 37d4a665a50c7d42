/**
 * Shared parts of the transparent-capture tests on the local cluster: aether installed by its
 * chart with `transparentCapture=true` (the CNI plugin chained into the node's conflist by the
 * node agent's DaemonSet, real containerd invoking it for every pod), unmodified workloads — an
 * echo-basic `web` Service with a producer route, a consumer namespace with a consumer route, Istio's
 * echo server behind a raw TCP port, busybox clients — and what the tests read: a pod's own view
 * (`kubectl exec`), its nftables table (in its netns), the node proxy's Envoy stats.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Cluster, imageNames, paths } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { uninstallAether } from "../testbed/conformance/mod.ts";
import { condition, installChart, podPids, releaseNs, waitFor } from "./cluster_ha.ts";
import { istioEchoDeployment } from "./cluster_fixtures.ts";
import { deleteIfPresent, kubectl, rollout, waitExplained } from "./kubectl.ts";

/** The namespaces of one run: the producer's (Services, routes) and a consumer's. */
export interface CaptureNamespaces {
  app: string;
  consumer: string;
}

const pod = (ns: string, name: string, image: string, extra = "") => `
apiVersion: v1
kind: Pod
metadata: {name: ${name}, namespace: ${ns}${extra}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - {name: main, image: ${image}, imagePullPolicy: Never, command: [sleep, "3600"]}
`;

const echoDeployment = (ns: string, name: string, replicas = 1) => `
apiVersion: apps/v1
kind: Deployment
metadata: {name: ${name}, namespace: ${ns}}
spec:
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}}}
    spec:
      containers:
      - name: echo
        image: ${imageNames.echoBasic}
        imagePullPolicy: Never
        env:
        - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
        - {name: NAMESPACE, valueFrom: {fieldRef: {fieldPath: metadata.namespace}}}
        ports: [{containerPort: 3000}]
        readinessProbe: {httpGet: {path: /, port: 3000}, periodSeconds: 1}
        livenessProbe: {httpGet: {path: /, port: 3000}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: ${name}, namespace: ${ns}}
spec:
  selector: {app: ${name}}
  # No appProtocol: the capture listener sniffs HTTP on this port.
  ports: [{name: http, port: 8080, targetPort: 3000}]
`;

const route = (ns: string, name: string, parentNs: string, header: string, backend: string) => `
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: ${ns}}
spec:
  parentRefs: [{group: "", kind: Service, name: web, namespace: ${parentNs}, port: 8080}]
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-route, value: ${header}}]}
    backendRefs: [{name: ${backend}, namespace: ${parentNs}, port: 8080}]
`;

/**
 * The workloads: `web` (2 pods) and `web-v2` with a producer route on `web` (`x-route:
 * producer`, to `web`); a consumer route in the consumer namespace (`x-route: consumer`, to
 * `web-v2`, allowed by a ReferenceGrant); Istio's echo server `tcp-echo` on a raw TCP port
 * (`appProtocol: tcp`, the floor) and a sniffed one; busybox clients in both namespaces, one
 * opted out; an Istio echo client pod.
 */
export function captureWorkloads(n: CaptureNamespaces): string {
  const { app, consumer } = n;
  return [
    `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${app}}\n`,
    `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${consumer}}\n`,
    echoDeployment(app, "web", 2),
    echoDeployment(app, "web-v2"),
    route(app, "web-producer", app, "producer", "web"),
    route(consumer, "web-consumer", app, "consumer", "web-v2"),
    `
apiVersion: gateway.networking.k8s.io/v1beta1
kind: ReferenceGrant
metadata: {name: consumer-routes, namespace: ${app}}
spec:
  from: [{group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: ${consumer}}]
  to: [{group: "", kind: Service}]
`,
    istioEchoDeployment("tcp-echo", app, imageNames.echoAdvanced) + `---
apiVersion: v1
kind: Service
metadata: {name: tcp-echo, namespace: ${app}}
spec:
  selector: {app: tcp-echo}
  ports:
  - {name: floor, port: 9000, targetPort: 9090, appProtocol: tcp}
  - {name: sniffed, port: 9090}
`,
    pod(app, "client", imageNames.busybox),
    pod(consumer, "client", imageNames.busybox),
    pod(app, "opted-out", imageNames.busybox, `, annotations: {aether.io/capture: "false"}`),
    `
apiVersion: v1
kind: Pod
metadata: {name: echo-client, namespace: ${app}}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - {name: main, image: ${imageNames.echoAdvanced}, imagePullPolicy: Never}
`,
  ].join("---\n");
}

/** The installed release, the workloads and what the tests read of them. */
export interface CaptureEnv {
  ns: CaptureNamespaces;
  k(args: string[], stdin?: string): Promise<string>;
  // deno-lint-ignore no-explicit-any
  json(args: string[]): Promise<any>;
  /** Runs `cmd` in pod `name` of `ns` (its first container); stdout. */
  exec(ns: string, name: string, cmd: string[]): Promise<string>;
  /** The node's CNI conflist (the file the plugin is chained into) and bin folder. */
  conflist: string;
  cniBinDir: string;
  cleanup(): Promise<void>;
}

/**
 * Installs aether with capture on (and `sets`, e.g. identity), applies the workloads and waits
 * until they are Ready.
 */
export async function installCapture(c: Cluster, sets: string[] = []): Promise<CaptureEnv> {
  for (const p of ["helm", "kubectl", "nft", "curl"]) await ensurePeer(p);
  const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, stdin);
  const json = async (args: string[]) => JSON.parse(await k([...args, "-o", "json"]));
  const id = crypto.randomUUID().slice(0, 6);
  const ns = { app: `capture-${id}`, consumer: `capture-${id}-consumer` };
  const workloads = captureWorkloads(ns);
  const cleanup = async () => {
    await deleteIfPresent(c.kubeconfig, workloads, false).catch(() => {});
    await uninstallAether(c.kubeconfig).catch(() => {});
  };
  await c.importImage("aether");
  await c.importImage("echoAdvanced");
  await uninstallAether(c.kubeconfig); // a run killed before its clean-up
  await installChart(c, ["transparentCapture=true", ...sets]);
  const p = paths(c.layout);
  const env: CaptureEnv = {
    ns,
    k,
    json,
    exec: (namespace, name, cmd) => k(["-n", namespace, "exec", name, "--", ...cmd]),
    conflist: join(p.cniConfDir, "10-aether.conflist"),
    cniBinDir: p.cniBinDir,
    cleanup,
  };
  try {
    if (sets.includes("identity.enabled=true")) {
      await rollout(c.kubeconfig, releaseNs, "statefulset/spire-server");
      await rollout(c.kubeconfig, releaseNs, "daemonset/spire-agent");
    }
    await rollout(c.kubeconfig, releaseNs, "daemonset/aether-node-proxy");
    await rollout(c.kubeconfig, releaseNs, "daemonset/aether-agent", {
      // Why it is not Ready, in its own words.
      more: () =>
        nodeAgentJson(c, "/status").then((s) => `--- node agent: ${JSON.stringify(s.ready)}`)
          .catch((e) => `--- node agent /status: ${e}`),
    });
    await waitFor(
      "aether-cni chained in the node's conflist",
      async () =>
        (await Deno.readTextFile(env.conflist)).includes('"aether-cni"') ? true : undefined,
      60_000,
    );
    await k(["apply", "-f", "-"], workloads);
    for (const d of ["web", "web-v2", "tcp-echo"]) {
      await rollout(c.kubeconfig, ns.app, `deployment/${d}`);
    }
    for (
      const [namespace, names] of [[ns.app, "client opted-out echo-client"], [
        ns.consumer,
        "client",
      ]]
    ) {
      await waitExplained(c.kubeconfig, namespace, [
        "wait",
        "--for=condition=Ready",
        ...names.split(" ").map((n) => `pod/${n}`),
        "--timeout=300s",
      ]);
    }
    return env;
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** What echo-basic reports of a request: the pod that answered and the headers it got. */
export interface Echoed {
  pod: string;
  namespace: string;
  headers: Record<string, string>;
}

/** `wget` of `url` inside pod `name` of `ns` (busybox), echo-basic's answer parsed. */
export async function wgetEcho(env: CaptureEnv, ns: string, name: string, url: string) {
  const out = await env.exec(ns, name, ["wget", "-q", "-O", "-", url]);
  const body = JSON.parse(out);
  const headers: Record<string, string> = {};
  for (const [h, v] of Object.entries(body.headers ?? {})) {
    headers[h.toLowerCase()] = Array.isArray(v) ? String(v[0]) : String(v);
  }
  return { pod: String(body.pod), namespace: String(body.namespace), headers } as Echoed;
}

/** The first pid of pod `name` in `ns` (to enter its network namespace). */
export async function podPid(env: CaptureEnv, ns: string, name: string): Promise<number> {
  const uid = (await env.json(["-n", ns, "get", "pod", name])).metadata.uid as string;
  return await waitFor(`a process of pod ${ns}/${name}`, async () => (await podPids(uid))[0]);
}

/** `nft` with `args` inside the network namespace of process `pid`; stdout. */
export async function nftIn(pid: number, args: string[]): Promise<string> {
  const out = await new Deno.Command("nsenter", {
    args: ["-t", String(pid), "-n", await ensurePeer("nft"), ...args],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `nft ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return new TextDecoder().decode(out.stdout);
}

/**
 * The node proxy's Envoy stats whose names match `filter` (its admin port is ephemeral: read from
 * the address file in its container, asked from there).
 */
export async function nodeProxyStats(c: Cluster, filter: string): Promise<Map<string, number>> {
  const out = await nodeProxyAdmin(c, `/stats?filter=${encodeURIComponent(filter)}`);
  const stats = new Map<string, number>();
  for (const line of out.split("\n")) {
    const m = line.match(/^(\S+): (\d+)$/);
    if (m) stats.set(m[1], Number(m[2]));
  }
  return stats;
}

/** The body of the node proxy Envoy's admin `path` (fetched from inside its pod). */
export function nodeProxyAdmin(c: Cluster, path: string): Promise<string> {
  const url = `http://$(cat /tmp/envoy-admin-address)${path}`;
  return kubectl(c.kubeconfig, [
    ...["-n", releaseNs, "exec", "ds/aether-node-proxy", "--"],
    ...["/bin/sh", "-c", `wget -q -O- "${url}"`],
  ]);
}

/** GET `path` of the node agent's admin server (on the node address), parsed as JSON. */
// deno-lint-ignore no-explicit-any
export async function nodeAgentJson(c: Cluster, path: string): Promise<any> {
  return JSON.parse(await nodeAgentText(c, path));
}

/** The body of the node agent's admin `path` (its admin port on the node address). */
export function nodeAgentText(c: Cluster, path: string): Promise<string> {
  return nodeNetText(c, `http://${c.layout.nodeIp}:15000${path}`);
}

/** The body of `url` fetched from the node's network namespace (node and pod addresses). */
export async function nodeNetText(c: Cluster, url: string): Promise<string> {
  const out = await new Deno.Command("nsenter", {
    args: [`--net=/run/netns/${c.layout.netns}`, "curl", "-sf", url],
    stdout: "piped",
  }).output();
  assert.ok(out.success, `GET ${url}`);
  return new TextDecoder().decode(out.stdout);
}

/** The node agent's `/debug/capture` document (its admin port on the node address). */
// deno-lint-ignore no-explicit-any
export function debugCapture(c: Cluster): Promise<any> {
  return nodeAgentJson(c, "/debug/capture");
}

/** The sum of the stats matching `filter` whose names end in `suffix`. */
export async function statSum(c: Cluster, filter: string, suffix: string): Promise<number> {
  let n = 0;
  for (const [name, v] of await nodeProxyStats(c, filter)) if (name.endsWith(suffix)) n += v;
  return n;
}

/** Waits until each `[namespace, name]` route of `resource` is Accepted on its Service parent. */
export async function meshRoutesAccepted(
  env: CaptureEnv,
  resource: string,
  routes: readonly (readonly [string, string])[],
): Promise<void> {
  for (const [ns, name] of routes) {
    await waitFor(`${resource} ${ns}/${name} Accepted on its Service parent`, async () => {
      const r = await env.json(["-n", ns, "get", resource, name]);
      const parent = r.status?.parents?.find((p: { controllerName: string }) =>
        p.controllerName === "gateway.aether.io/mesh"
      );
      return condition(parent?.conditions, "Accepted")?.status === "True" ? true : undefined;
    }, 120_000);
  }
}
