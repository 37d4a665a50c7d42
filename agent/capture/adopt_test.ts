import assert from "node:assert/strict";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { PodAttachment } from "../../cni/mod.ts";
import { ADOPTED_PREFIX, adoptedGone, adoptionCandidates } from "./adopt.ts";

const pod = (ns: string, name: string, extra: Record<string, unknown> = {}) =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace: ns, name, uid: `uid-${name}`, ...(extra.metadata ?? {}) },
    spec: { nodeName: "n1", ...(extra.spec ?? {}) },
    status: {
      phase: "Running",
      podIP: "10.1.0.9",
      podIPs: [{ ip: "10.1.0.9" }],
      ...(extra.status ?? {}),
    },
  }) as unknown as KubeObject;

const record = (ns: string, name: string, containerId: string): PodAttachment => ({
  namespace: ns,
  name,
  containerId,
  ifName: "eth0",
  netnsPath: `/var/run/netns/${name}`,
  ips: ["10.1.0.9"],
});

Deno.test("adoptionCandidates: unrecorded running pods of this node inside the mesh", () => {
  const objects = [
    pod("a", "old"),
    pod("a", "recorded"),
    pod("a", "elsewhere", { spec: { nodeName: "n2" } }),
    pod("a", "host", { spec: { nodeName: "n1", hostNetwork: true } }),
    pod("a", "out", { metadata: { uid: "u", annotations: { "aether.io/capture": "false" } } }),
    pod("kube-system", "dns"),
    pod("a", "done", { status: { phase: "Succeeded" } }),
    pod("a", "no-ip", { status: { podIP: undefined, podIPs: undefined } }),
    // Terminating: the runtime's DEL may already have run, its netns about to go.
    pod("a", "leaving", {
      metadata: { uid: "uid-leaving", deletionTimestamp: "2026-12-06T10:00:00Z" },
    }),
  ];
  const got = adoptionCandidates(objects, "n1", [record("a", "recorded", "c1")], ["kube-system"]);
  assert.deepEqual(got, [{ namespace: "a", name: "old", uid: "uid-old", ips: ["10.1.0.9"] }]);
});

Deno.test("adoptedGone: only adopted records whose pod UID left the node", () => {
  const known = [
    record("a", "stays", `${ADOPTED_PREFIX}uid-stays`),
    record("a", "left", `${ADOPTED_PREFIX}uid-left`),
    record("a", "plugin", "sandbox-1"),
  ];
  const gone = adoptedGone([pod("a", "stays")], "n1", known);
  assert.deepEqual(gone.map((a) => a.name), ["left"]);
});
