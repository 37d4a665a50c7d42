/**
 * Control-plane smoke test: kube-apiserver + kube-controller-manager + kube-scheduler + kwok. A
 * Deployment becomes a ReplicaSet and pods, the scheduler binds them to a kwok node, and kwok
 * reports them Running and Ready: what the conformance suite's setup waits for before its tests.
 */
import assert from "node:assert/strict";
import { type Kube, startControllers, startKube } from "./kube.ts";
import { waitFor } from "./proc.ts";

Deno.test("kube control plane: a Deployment's pods run on a kwok node", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-kube-pods-" });
  let kube: Kube | undefined;
  try {
    kube = await startKube(dir);
    const k = kube;
    await startControllers(k);
    const node = await k.request("POST", "/api/v1/nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: {
        name: "kwok-node-0",
        annotations: { "kwok.x-k8s.io/node": "fake" },
        labels: { "kubernetes.io/hostname": "kwok-node-0", type: "kwok" },
      },
      status: {
        allocatable: { cpu: "32", memory: "256Gi", pods: "110" },
        capacity: { cpu: "32", memory: "256Gi", pods: "110" },
      },
    });
    assert.equal(node.status, 201, JSON.stringify(node.json));
    await waitFor(
      "kwok-node-0 Ready",
      async () => {
        const n = await k.request("GET", "/api/v1/nodes/kwok-node-0");
        // deno-lint-ignore no-explicit-any
        const ready = (n.json?.status?.conditions ?? []).find((c: any) => c.type === "Ready");
        return ready?.status === "True" ? true : undefined;
      },
      60_000,
      k.procs,
    );

    const labels = { app: "echo" };
    const deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "echo", namespace: "default" },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: { containers: [{ name: "echo", image: "echo-basic:never-pulled" }] },
        },
      },
    };
    const made = await k.request(
      "POST",
      "/apis/apps/v1/namespaces/default/deployments",
      deployment,
    );
    assert.equal(made.status, 201, JSON.stringify(made.json));
    await waitFor(
      "2 ready replicas",
      async () => {
        const d = await k.request("GET", "/apis/apps/v1/namespaces/default/deployments/echo");
        return d.json?.status?.readyReplicas === 2 ? true : undefined;
      },
      90_000,
      k.procs,
    );
    const pods = await k.request("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Decho");
    assert.equal(pods.json.items.length, 2);
    for (const pod of pods.json.items) {
      assert.equal(pod.spec.nodeName, "kwok-node-0");
      assert.equal(pod.status.phase, "Running");
      assert.match(pod.status.podIP, /^10\.244\.0\.\d+$/);
    }
  } finally {
    await kube?.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
