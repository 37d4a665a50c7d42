/**
 * Shared parts of the resilience tests on the local cluster: aether installed with its chart (node
 * agents on), a `web` echo Service with two pods, a client pod whose network namespace the node
 * proxy serves, an edge Gateway and a GAMMA route both adding a header the test edits, and paced
 * load clients in their own processes (`e2e/load_client.ts`) through the edge and through the mesh.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { chartNodeValues, imageNames, paths } from "../testbed/cluster/mod.ts";
import { withoutEntry } from "../cni/mod.ts";
import type { Cluster } from "../testbed/cluster/mod.ts";
import { ensurePeer, projectRoot } from "../testbed/peers/mod.ts";
import { uninstallAether } from "../testbed/conformance/mod.ts";
import { NETNS_ANNOTATION } from "../lib/gatewayapi/mod.ts";
import { GATEWAY_LABEL } from "../controller/mod.ts";
import type { LoadResult } from "./identity_harness.ts";
import { deleteIfPresent, kubectl, rollout, waitExplained } from "./kubectl.ts";

export type { LoadResult };

/** The release and its namespace. */
export const release = "aether", releaseNs = "aether-system";
/** The Host of the edge route and the mesh name of the `web` Service (default port). */
export const edgeHost = "ha.example.com", meshHost = "web.aether.internal";

type Condition = { type: string; status: string; reason?: string };
/** A condition of a status, by type. */
export const condition = (conds: Condition[] | undefined, type: string) =>
  conds?.find((c) => c.type === type);

/** Polls `probe` every second until it returns a value; throws after `ms` with the last error. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  ms = 300_000,
): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ""}`);
}

/** The workloads and routes; `edit` is the value both routes set in the `x-edit` header. */
export function workloads(edit: string): string {
  return `
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
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
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: default}
spec:
  selector: {app: web}
  ports: [{name: http, port: 8080, targetPort: 3000}]
---
apiVersion: v1
kind: Pod
metadata: {name: ha-client, namespace: default}
spec:
  terminationGracePeriodSeconds: 0
  containers:
  - name: sleep
    image: ${imageNames.busybox}
    imagePullPolicy: Never
    command: [sleep, "3600"]
---
apiVersion: gateway.networking.k8s.io/v1
kind: Gateway
metadata: {name: ha, namespace: default}
spec:
  gatewayClassName: aether
  listeners: [{name: http, protocol: HTTP, port: 18080}]
---
${route("ha-edge", `{name: ha}`, `hostnames: ["${edgeHost}"]`, edit)}
---
${route("ha-mesh", `{group: "", kind: Service, name: web, port: 8080}`, "", edit)}
`;
}

function route(name: string, parent: string, hostnames: string, edit: string): string {
  return `apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: ${name}, namespace: default}
spec:
  parentRefs: [${parent}]
  ${hostnames}
  rules:
  - filters:
    - type: RequestHeaderModifier
      requestHeaderModifier: {set: [{name: x-edit, value: "${edit}"}]}
    backendRefs: [{name: web, port: 8080}]`;
}

/** The installed release and what the tests need of it. */
export interface HaEnv {
  k(args: string[], stdin?: string): Promise<string>;
  // deno-lint-ignore no-explicit-any
  json(args: string[]): Promise<any>;
  /** The edge pod's IP (the Gateway's address when a LoadBalancer implementation runs). */
  edgeIp: string;
  /** The client pod's network namespace, attached at `/run/netns/<netns>`. */
  netns: string;
  /** Stops everything the test made (the cluster stays up). */
  cleanup(): Promise<void>;
}

/** The pids of the processes of pod `uid` (their cgroup paths name `pod<uid>`). */
export async function podPids(uid: string): Promise<number[]> {
  const needles = [`pod${uid}`, `pod${uid.replaceAll("-", "_")}`];
  const pids: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const cg = await Deno.readTextFile(`/proc/${e.name}/cgroup`).catch(() => "");
    if (needles.some((n) => cg.includes(n))) pids.push(Number(e.name));
  }
  return pids;
}

/** Runs helm against the cluster in the release namespace; throws with its stderr. */
export async function helm(c: Cluster, args: string[]): Promise<void> {
  const out = await new Deno.Command(await ensurePeer("helm"), {
    args: [...args, `--kubeconfig=${c.kubeconfig}`, `--namespace=${releaseNs}`],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, `helm ${args[0]}: ${new TextDecoder().decode(out.stderr)}`);
}

/**
 * After a test's uninstall: if aether's CNI plugin is still chained in the node's conflist (seen
 * once after the churn soak, whose last action restarts the API server just before the uninstall:
 * `cni-install` did not learn the DaemonSet was gone), every later pod's ADD would fail and every
 * later test file with it. The entry is removed here, loudly; the product's own uninstall is proven
 * by e2e/cluster_capture_test.ts, which checks the conflist right after its uninstall.
 */
async function unchainLeftCni(c: Cluster): Promise<void> {
  const file = join(paths(c.layout).cniConfDir, "10-aether.conflist");
  const text = await Deno.readTextFile(file).catch(() => "");
  const without = text ? withoutEntry(text) : undefined;
  if (without === undefined) return;
  console.warn(`uninstall left aether-cni chained in ${file}: removed by the test's clean-up`);
  await Deno.writeTextFile(file, without);
}

/**
 * `helm install` of the chart from the locally built image: node agents on, one controller, the
 * node's CNI folders and DNS (chartNodeValues), and `sets` (`<value>=<x>`). Identity (SPIRE) is
 * off unless `sets` turn it on (`identity.enabled=true`: the SPIRE images are imported first).
 */
export async function installChart(c: Cluster, sets: string[] = []): Promise<void> {
  const [repository, tag] = imageNames.aether.split(/:(?=[^:]+$)/);
  if (sets.includes("identity.enabled=true")) {
    await c.importImage("spireServer");
    await c.importImage("spireAgent");
  }
  await helm(c, [
    "install",
    release,
    join(projectRoot, "charts", "aether"),
    "--create-namespace",
    `--set=image.repository=${repository}`,
    `--set=image.tag=${tag}`,
    "--set=image.pullPolicy=Never",
    "--set=agent.gamma=true",
    "--set=controller.replicas=1",
    "--set=identity.enabled=false",
    ...chartNodeValues(c.layout),
    ...sets.map((s) => `--set=${s}`),
  ]);
}

/**
 * Installs aether (chart, node agents on, one controller) with `sets`, applies the workloads,
 * makes the client pod's netns known to the node proxy, and waits until both paths answer.
 */
export async function setUp(c: Cluster, sets: string[] = []): Promise<HaEnv> {
  const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, stdin);
  const json = async (args: string[]) => JSON.parse(await k([...args, "-o", "json"]));
  const ip = await ensurePeer("ip");
  const netns = `aether-ha-${crypto.randomUUID().slice(0, 8)}`;
  const cleanup = async () => {
    await deleteIfPresent(c.kubeconfig, workloads("0"), false).catch(() => {});
    await uninstallAether(c.kubeconfig).catch(() => {});
    await unchainLeftCni(c);
    await new Deno.Command(ip, { args: ["netns", "delete", netns] }).output().catch(() => {});
  };
  await c.importImage("aether");
  // A run killed before its clean-up left its objects: start from none.
  await deleteIfPresent(c.kubeconfig, workloads("0"));
  await uninstallAether(c.kubeconfig); // the release and the edges its controller made
  await installChart(c, sets);
  try {
    await rollout(c.kubeconfig, releaseNs, "deployment/aether-controller");
    await rollout(c.kubeconfig, releaseNs, "daemonset/aether-node-proxy");
    await rollout(c.kubeconfig, releaseNs, "daemonset/aether-agent");
    await k(["apply", "-f", "-"], workloads("0"));
    await rollout(c.kubeconfig, "default", "deployment/web");
    await waitExplained(c.kubeconfig, "default", [
      "wait",
      "--for=condition=Ready",
      "pod/ha-client",
      "--timeout=300s",
    ]);
    // No aether CNI plugin yet: the test tells the node proxy where the pod's netns is, as the
    // plugin will (the pod's netns bound under /run/netns, which the node agent mounts).
    const client = await json(["get", "pod", "ha-client"]);
    const pid = await waitFor(
      "a process of the client pod",
      async () => (await podPids(client.metadata.uid))[0],
    );
    const attach = await new Deno.Command(ip, {
      args: ["netns", "attach", netns, String(pid)],
      stderr: "piped",
    }).output();
    assert.ok(attach.success, new TextDecoder().decode(attach.stderr));
    await k([
      "annotate",
      "--overwrite",
      "pod",
      "ha-client",
      `${NETNS_ANNOTATION}=/var/run/netns/${netns}`,
    ]);
    const edge = await waitFor("the edge pod Ready", async () => {
      // Only the edge of this Gateway (others may run on the shared cluster).
      const pods = await json([
        "-n",
        releaseNs,
        "get",
        "pods",
        "-l",
        `${GATEWAY_LABEL}=default.ha`,
      ]);
      return pods.items.find((p: { status: { conditions?: Condition[] } }) =>
        condition(p.status.conditions, "Ready")?.status === "True"
      );
    });
    const env: HaEnv = { k, json, edgeIp: edge.status.podIP, netns, cleanup };
    await waitEdit(env, "0");
    return env;
  } catch (e) {
    await cleanup();
    throw e;
  }
}

/** The `x-edit` header a request carried to `web`, through the edge or through the mesh. */
export async function seenEdit(env: HaEnv, via: "edge" | "mesh"): Promise<string | undefined> {
  const target = via === "edge" ? `http://${env.edgeIp}:18080/` : "http://127.0.0.1:18081/";
  const host = via === "edge" ? edgeHost : meshHost;
  const curl = ["curl", "-s", "-m", "5", "-H", `host: ${host}`, target];
  const cmd = via === "edge" ? curl : ["nsenter", `--net=/run/netns/${env.netns}`, ...curl];
  const out = await new Deno.Command(cmd[0], { args: cmd.slice(1), stdout: "piped" }).output();
  if (!out.success) return undefined;
  try {
    const body = JSON.parse(new TextDecoder().decode(out.stdout));
    const headers = (body.headers ?? {}) as Record<string, string | string[]>;
    const v = Object.entries(headers).find(([name]) => name.toLowerCase() === "x-edit")?.[1];
    return Array.isArray(v) ? v[0] : v;
  } catch {
    return undefined;
  }
}

/** Waits until requests through both the edge and the mesh carry `x-edit: value`. */
export async function waitEdit(env: HaEnv, value: string, ms = 300_000): Promise<void> {
  for (const via of ["edge", "mesh"] as const) {
    await waitFor(
      `x-edit ${value} through the ${via}`,
      async () => (await seenEdit(env, via)) === value ? true : undefined,
      ms,
    );
  }
}

/** A paced load client in its own process, through the edge or (inside the client pod) the mesh. */
export function startLoad(
  env: HaEnv,
  via: "edge" | "mesh",
  stopFile: string,
  rate = 250,
): { done: Promise<LoadResult> } {
  const script = join(projectRoot, "e2e", "load_client.ts");
  const load = [
    Deno.execPath(),
    "run",
    "-A",
    script,
    "--host",
    via === "edge" ? edgeHost : meshHost,
    "--rate",
    String(rate),
    "--workers",
    "16",
    "--seconds",
    "600",
    "--stop-file",
    stopFile,
    ...(via === "edge" ? ["--address", env.edgeIp, "--port", "18080"] : ["--port", "18081"]),
  ];
  const cmd = via === "edge" ? load : ["nsenter", `--net=/run/netns/${env.netns}`, ...load];
  const child = new Deno.Command(cmd[0], { args: cmd.slice(1), stdout: "piped", stderr: "piped" })
    .spawn();
  const done = child.output().then((out) => {
    const text = new TextDecoder().decode(out.stdout).trim();
    if (!out.success) {
      throw new Error(`load client (${via}) failed: ${new TextDecoder().decode(out.stderr)}`);
    }
    return JSON.parse(text.split("\n").pop()!) as LoadResult;
  });
  return { done };
}

/** A pod's processes: RSS (anonymous part apart: file pages are shared binaries), CPU, per program. */
export interface PodUsage {
  rssMiB: number;
  anonMiB: number;
  cpuS: number;
  /** By process name (`deno`, `envoy`, `pause`, …). */
  byProgram: Record<string, { rssMiB: number; anonMiB: number }>;
}

/**
 * A process's name in {@link PodUsage.byProgram}: its executable's, and for Deno the script it
 * runs (`deno agent/main.ts`, `deno cni/main.ts`: the node agent's pod runs both).
 */
export function programOf(name: string, cmdline: string): string {
  if (name !== "deno") return name;
  const script = cmdline.split("\0").find((a) => /\.ts$/.test(a));
  return script ? `deno ${script}` : name;
}

/** RSS and CPU seconds of every process of a pod (by uid), read from the host's /proc. */
export async function podUsage(uid: string): Promise<PodUsage> {
  const clockTicks = 100; // USER_HZ on Linux
  let rss = 0, anon = 0, ticks = 0;
  const byProgram: PodUsage["byProgram"] = {};
  for (const pid of await podPids(uid)) {
    const status = await Deno.readTextFile(`/proc/${pid}/status`).catch(() => "");
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
    rss += kb("VmRSS");
    anon += kb("RssAnon");
    const program = programOf(
      /Name:\s+(\S+)/.exec(status)?.[1] ?? "?",
      await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => ""),
    );
    const mine = byProgram[program] ??= { rssMiB: 0, anonMiB: 0 };
    mine.rssMiB += kb("VmRSS") / 1024;
    mine.anonMiB += kb("RssAnon") / 1024;
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    ticks += Number(f[11] ?? 0) + Number(f[12] ?? 0); // utime, stime
  }
  for (const v of Object.values(byProgram)) {
    v.rssMiB = Math.round(v.rssMiB);
    v.anonMiB = Math.round(v.anonMiB);
  }
  return {
    rssMiB: Math.round(rss / 1024),
    anonMiB: Math.round(anon / 1024),
    cpuS: ticks / clockTicks,
    byProgram,
  };
}
