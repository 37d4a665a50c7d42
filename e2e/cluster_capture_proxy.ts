/**
 * The node proxy replaced under captured load (steps of e2e/cluster_capture_test.ts): its
 * DaemonSet rolled (the new Envoy starts beside the old one, binds the same listeners in every
 * pod's netns, and the old one drains and leaves) and its pod deleted; 100 req/s from a captured
 * pod, 0 failed requests either way.
 * @module
 */
import assert from "node:assert/strict";
import type { Cluster } from "../testbed/cluster/mod.ts";
import type { CaptureEnv } from "./cluster_capture.ts";
import { assertNoneFailed, underCapturedLoad } from "./cluster_capture_lifecycle.ts";
import { condition, releaseNs, waitFor } from "./cluster_ha.ts";
import { rollout } from "./kubectl.ts";

type Pod = {
  metadata: { name: string; uid: string; deletionTimestamp?: string };
  status: { conditions?: { type: string; status: string }[] };
};

async function proxyPods(env: CaptureEnv): Promise<Pod[]> {
  const list = await env.json([
    ...["-n", releaseNs, "get", "pods", "-l", "app.kubernetes.io/component=node-proxy"],
  ]);
  return list.items as Pod[];
}

/** Waits until the only node-proxy pod is a Ready one other than `old`; its uid. */
async function replaced(env: CaptureEnv, old: Pod): Promise<string> {
  return await waitFor("a new node proxy Ready, the old one gone", async () => {
    const pods = await proxyPods(env);
    const [p] = pods;
    return pods.length === 1 && p.metadata.uid !== old.metadata.uid &&
        condition(p.status.conditions, "Ready")?.status === "True"
      ? p.metadata.uid
      : undefined;
  }, 300_000);
}

/** `kubectl rollout restart` of the node-proxy DaemonSet under captured load: 0 failed. */
export async function proxyRollUnderLoad(c: Cluster, env: CaptureEnv, vip: string) {
  const [old] = await proxyPods(env);
  let started = 0;
  const r = await underCapturedLoad(env, vip, async () => {
    started = Date.now();
    await env.k(["-n", releaseNs, "rollout", "restart", "daemonset/aether-node-proxy"]);
    await rollout(c.kubeconfig, releaseNs, "daemonset/aether-node-proxy");
    await replaced(env, old);
  });
  console.log(`node-proxy roll took ${Date.now() - started} ms`);
  assertNoneFailed("node-proxy DaemonSet roll under captured load", r);
}

/** The node-proxy pod deleted under captured load: 0 failed. */
export async function proxyDeletedUnderLoad(env: CaptureEnv, vip: string) {
  const [old] = await proxyPods(env);
  const r = await underCapturedLoad(env, vip, async () => {
    await env.k(["-n", releaseNs, "delete", "pod", old.metadata.name, "--wait=false"]);
    assert.notEqual(await replaced(env, old), old.metadata.uid);
  });
  assertNoneFailed("node-proxy pod deleted under captured load", r);
}
