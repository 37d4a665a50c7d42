/**
 * The node agent's comings and goings under transparent capture (steps of
 * e2e/cluster_capture_test.ts): a pod made while no agent runs is refused by the CNI plugin until
 * one does, and its first call is captured; an agent restart under captured load loses no request
 * and leaves each pod's table as it was.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import type { Cluster } from "../testbed/cluster/mod.ts";
import { imageNames } from "../testbed/cluster/mod.ts";
import { projectRoot } from "../testbed/peers/mod.ts";
import { type CaptureEnv, nftIn, podPid } from "./cluster_capture.ts";
import { condition, type LoadResult, releaseNs, waitFor } from "./cluster_ha.ts";
import { waitExplained } from "./kubectl.ts";

type Pod = {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status: {
    phase?: string;
    conditions?: { type: string; status: string }[];
    initContainerStatuses?: { state?: Record<string, unknown> }[];
  };
};

async function agentPods(env: CaptureEnv): Promise<Pod[]> {
  const list = await env.json([
    "-n",
    releaseNs,
    "get",
    "pods",
    "-l",
    "app.kubernetes.io/component=agent",
  ]);
  return list.items as Pod[];
}

/** A pod whose init container calls `url` at once and keeps what it got (or that it failed). */
const firstCallPod = (ns: string, url: string) => `
apiVersion: v1
kind: Pod
metadata: {name: first-call, namespace: ${ns}}
spec:
  terminationGracePeriodSeconds: 0
  volumes: [{name: shared, emptyDir: {}}]
  initContainers:
  - name: first
    image: ${imageNames.busybox}
    imagePullPolicy: Never
    command: [sh, -c, 'wget -q -O /shared/first ${url} || echo CONNECT-FAILED > /shared/first']
    volumeMounts: [{name: shared, mountPath: /shared}]
  containers:
  - name: main
    image: ${imageNames.busybox}
    imagePullPolicy: Never
    command: [sleep, "3600"]
    volumeMounts: [{name: shared, mountPath: /shared}]
`;

/**
 * The node agent kept away (its DaemonSet's nodeSelector matches no node, so its pod goes and
 * no new one comes; the plugin stays chained), a pod is made: its sandbox is refused by
 * aether-cni, again on kubelet's retries, and none of its containers starts. With the agent back
 * the pod starts, and its init container's very first call went through capture.
 */
export async function agentDownPodCaptured(c: Cluster, env: CaptureEnv, vip: string) {
  const { app } = env.ns;
  const ds = ["-n", releaseNs, "patch", "daemonset", "aether-agent"];
  await env.k([
    ...ds,
    "--type=merge",
    "-p",
    '{"spec":{"template":{"spec":{"nodeSelector":{"aether.io/test":"away"}}}}}',
  ]);
  try {
    await waitFor(
      "the node agent pod gone",
      async () => (await agentPods(env)).length === 0 ? true : undefined,
      120_000,
    );
    await env.k(["apply", "-f", "-"], firstCallPod(app, `http://${vip}:8080/first-call`));
    const refused = await waitFor("aether-cni refusing the pod's sandbox", async () => {
      const ev = await env.json([
        "-n",
        app,
        "get",
        "events",
        "--field-selector=involvedObject.name=first-call,reason=FailedCreatePodSandBox",
      ]);
      // deno-lint-ignore no-explicit-any
      const hit = ev.items.find((e: any) => /aether-cni/.test(e.message));
      return hit ? String(hit.message) : undefined;
    }, 120_000);
    assert.match(refused, /node agent is unreachable/, refused);
    await new Promise((r) => setTimeout(r, 10_000)); // kubelet retries meanwhile
    const waiting = (await env.json(["-n", app, "get", "pod", "first-call"])) as Pod;
    assert.equal(waiting.status.phase, "Pending");
    const started = (waiting.status.initContainerStatuses ?? []).some((s) =>
      s.state?.running || s.state?.terminated
    );
    assert.equal(started, false, "no container ran while the agent was away");
  } finally {
    await env.k([
      ...ds,
      "--type=json",
      "-p",
      '[{"op":"remove","path":"/spec/template/spec/nodeSelector"}]',
    ])
      .catch(() => {});
  }
  const back = Date.now();
  await waitExplained(c.kubeconfig, app, [
    "wait",
    "--for=condition=Ready",
    "pod/first-call",
    "--timeout=240s",
  ]);
  const first = await env.exec(app, "first-call", ["cat", "/shared/first"]);
  const body = JSON.parse(first.startsWith("{") ? first : "{}");
  const headers = Object.fromEntries(
    Object.entries(body.headers ?? {}).map(([h, v]) => [h.toLowerCase(), v]),
  );
  assert.deepEqual(headers["x-route"], ["producer"], `the first call was captured: ${first}`);
  console.log(
    `agent back: the waiting pod Ready ${Date.now() - back} ms later, first call captured`,
  );
}

/**
 * Runs `during` while the app namespace's client pod sends 100 req/s of captured load (its own
 * netns, to `vip`:8080 with web's Host, 8 keep-alive connections); the load's result.
 */
export async function underCapturedLoad(
  env: CaptureEnv,
  vip: string,
  during: () => Promise<void>,
): Promise<LoadResult> {
  const { app } = env.ns;
  const pid = await podPid(env, app, "client");
  const dir = await Deno.makeTempDir({ prefix: "aether-capture-load-" });
  const stopFile = join(dir, "stop");
  const child = new Deno.Command("nsenter", {
    args: [
      ...["-t", String(pid), "-n", Deno.execPath(), "run", "-A"],
      join(projectRoot, "e2e", "load_client.ts"),
      ...["--address", vip, "--port", "8080", "--host", `web.${app}:8080`],
      ...["--rate", "100", "--workers", "8", "--seconds", "600", "--stop-file", stopFile],
    ],
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  try {
    await new Promise((r) => setTimeout(r, 5_000));
    await during();
    await new Promise((r) => setTimeout(r, 3_000));
  } finally {
    await Deno.writeTextFile(stopFile, "");
  }
  const out = await child.output();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout).trim().split("\n").pop()!) as LoadResult;
}

/** Asserts a load result: no failed request, and the load ran. */
export function assertNoneFailed(what: string, r: LoadResult): void {
  console.log(
    `${what}: ${r.sent} requests, ${r.failed} failed, p50 ${r.p50Ms} ms, p99 ${r.p99Ms} ms`,
  );
  assert.equal(r.failed, 0, `${JSON.stringify(r.statuses)} ${r.errors}`);
  assert.ok(r.sent > 500, `load ran (${r.sent} requests)`);
}

/**
 * Captured load from the client pod while the node agent's pod is deleted and replaced: 0 failed
 * requests, the same node proxy throughout, and the pod's table (rules and set elements) identical
 * before and after.
 */
export async function restartUnderLoad(env: CaptureEnv, vip: string) {
  const pid = await podPid(env, env.ns.app, "client");
  const table = () => nftIn(pid, ["-s", "list", "table", "inet", "aether"]);
  const before = await table();
  const [old] = await agentPods(env);
  const proxy = () =>
    env.json(["-n", releaseNs, "get", "pods", "-l", "app.kubernetes.io/component=node-proxy"]);
  const proxyBefore = (await proxy()).items[0].metadata.uid;
  const r = await underCapturedLoad(env, vip, async () => {
    await env.k(["-n", releaseNs, "delete", "pod", old.metadata.name, "--wait=false"]);
    await waitFor(
      "the replacement agent Ready",
      async () =>
        (await agentPods(env)).find((p) =>
          p.metadata.name !== old.metadata.name && !p.metadata.deletionTimestamp &&
          condition(p.status.conditions, "Ready")?.status === "True"
        ),
      300_000,
    );
  });
  assertNoneFailed("agent restart under captured load", r);
  assert.equal(await table(), before, "the pod's table is what it was");
  assert.equal((await proxy()).items[0].metadata.uid, proxyBefore, "the same node proxy");
}
