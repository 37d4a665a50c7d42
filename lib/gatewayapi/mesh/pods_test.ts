import assert from "node:assert/strict";
import type { KubeObject } from "../types.ts";
import { NETNS_ANNOTATION, podNetworkObject, podsOnNode } from "./pods.ts";
import { resolve } from "../resolve.ts";

const pod = (
  name: string,
  extra: { uid?: string; annotations?: Record<string, string>; podIP?: string; phase?: string } =
    {},
  node = "n1",
): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: {
    name,
    namespace: "shop",
    ...(extra.uid ? { uid: extra.uid } : {}),
    ...(extra.annotations ? { annotations: extra.annotations } : {}),
  },
  spec: { nodeName: node, serviceAccountName: "cart" },
  status: {
    phase: extra.phase ?? "Running",
    ...(extra.podIP ? { podIP: extra.podIP } : {}),
  },
});

const record = (name: string, netnsPath: string, podUID?: string, ips = ["10.1.0.7"]) =>
  podNetworkObject("shop", name, {
    ...(podUID ? { podUID } : {}),
    containerID: `sandbox-${name}`,
    ifName: "eth0",
    netnsPath,
    ips,
  });

Deno.test("pods: a Pod takes its netns and IP from the PodNetwork record of its UID", () => {
  const pods = podsOnNode([pod("a", { uid: "u-a" }), record("a", "/run/netns/cni-a", "u-a")], "n1");
  assert.deepEqual(pods, [{
    namespace: "shop",
    name: "a",
    netnsPath: "/run/netns/cni-a",
    ip: "10.1.0.7",
    serviceAccount: "cart",
  }]);
});

Deno.test("pods: the Pod's own podIP wins over the record's address", () => {
  const pods = podsOnNode([
    pod("a", { uid: "u-a", podIP: "10.1.0.9" }),
    record("a", "/run/netns/cni-a", "u-a"),
  ], "n1");
  assert.equal(pods[0].ip, "10.1.0.9");
});

Deno.test("pods: a record of another UID is another pod of that name, not joined", () => {
  // The Pod was recreated under the same name; the old sandbox's record is not its network.
  const objects = [pod("a", { uid: "u-new" }), record("a", "/run/netns/cni-old", "u-old")];
  assert.deepEqual(podsOnNode(objects, "n1"), []);
  // …but a record joins by namespace and name when it, or the Pod, has no UID.
  assert.equal(
    podsOnNode([pod("a", { uid: "u-new" }), record("a", "/run/netns/cni-x")], "n1")[0].netnsPath,
    "/run/netns/cni-x",
  );
  assert.equal(
    podsOnNode([pod("a"), record("a", "/run/netns/cni-y", "u-any")], "n1")[0].netnsPath,
    "/run/netns/cni-y",
  );
});

Deno.test("pods: the UID joins across a renamed record, and the hand annotation still works", () => {
  const objects = [
    pod("a", { uid: "u-a" }),
    record("other-name", "/run/netns/cni-a", "u-a"),
    pod("b", { annotations: { [NETNS_ANNOTATION]: "/var/run/netns/b" } }),
  ];
  assert.deepEqual(podsOnNode(objects, "n1").map((p) => [p.name, p.netnsPath]), [
    ["a", "/run/netns/cni-a"],
    ["b", "/var/run/netns/b"],
  ]);
  // A record wins over the annotation: it is what the runtime reported.
  const both = pod("c", { uid: "u-c", annotations: { [NETNS_ANNOTATION]: "/hand" } });
  assert.equal(podsOnNode([both, record("c", "/cni", "u-c")], "n1")[0].netnsPath, "/cni");
});

Deno.test("pods: no netns, another node, or finished: not served; sorted by namespace, name", () => {
  const objects = [
    pod("z", { uid: "u-z" }),
    record("z", "/n/z", "u-z"),
    pod("y", { uid: "u-y" }), // no record, no annotation
    pod("x", { uid: "u-x" }, "n2"),
    record("x", "/n/x", "u-x"),
    pod("w", { uid: "u-w", phase: "Succeeded" }),
    record("w", "/n/w", "u-w"),
    pod("m", { uid: "u-m" }),
    record("m", "/n/m", "u-m"),
  ];
  assert.deepEqual(podsOnNode(objects, "n1").map((p) => p.name), ["m", "z"]);
});

Deno.test("pods: PodNetwork records are admitted by resolve, not reported", () => {
  const { problems } = resolve([pod("a", { uid: "u-a" }), record("a", "/n/a", "u-a")]);
  assert.deepEqual(problems, []);
  const bad = { ...record("a", "/n/a"), apiVersion: "aether.io/v9" };
  assert.deepEqual(resolve([bad]).problems.map((p) => p.field), ["apiVersion"]);
});
