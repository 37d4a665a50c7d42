/**
 * Test support for the CNI plugin: invocation builders (a pod's CNI_ARGS, a chained
 * configuration with its prevResult) and an in-memory {@link Attachments} whose `captured` wait is
 * a promise the test resolves.
 * @module
 */
import type { Attachments, PodAttachment } from "./handler.ts";

/** A bridge plugin's result, as the runtime hands it to the next plugin. */
export const PREV_RESULT = {
  cniVersion: "1.0.0",
  interfaces: [{ name: "eth0", mac: "0a:58:0a:f4:00:07", sandbox: "/run/netns/cni-1" }],
  ips: [{ interface: 0, address: "10.244.0.7/24", gateway: "10.244.0.1" }],
  routes: [{ dst: "0.0.0.0/0" }],
  dns: {},
};

/** `CNI_ARGS` as containerd sets them for a pod. */
export function podArgs(namespace: string, name: string, uid = `uid-${name}`): string {
  return `IgnoreUnknown=1;K8S_POD_NAMESPACE=${namespace};K8S_POD_NAME=${name};` +
    `K8S_POD_INFRA_CONTAINER_ID=sandbox-${name};K8S_POD_UID=${uid}`;
}

/** The plugin's configuration as the runtime passes it (list name and version, prevResult…). */
export function pluginConf(extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    cniVersion: "1.0.0",
    name: "pods",
    type: "aether-cni",
    capabilities: { "io.kubernetes.cri.pod-annotations": true },
    prevResult: PREV_RESULT,
    ...extra,
  };
}

/** The environment of one invocation of `verb` for pod `name` (namespace `shop`). */
export function podEnv(verb: string, name: string, extra: Record<string, string> = {}) {
  return {
    CNI_COMMAND: verb,
    CNI_CONTAINERID: `sandbox-${name}`,
    CNI_NETNS: `/run/netns/cni-${name}`,
    CNI_IFNAME: "eth0",
    CNI_ARGS: podArgs("shop", name),
    CNI_PATH: "/opt/cni/bin",
    ...extra,
  };
}

/** A promise with its resolve and reject at hand. */
export function deferred(): {
  promise: Promise<void>;
  resolve: () => void;
  reject: (e: Error) => void;
} {
  let resolve!: () => void, reject!: (e: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** An in-memory store; `captured(pod)` waits on {@link FakeAttachments.gate} of the pod. */
export class FakeAttachments implements Attachments {
  readonly records = new Map<string, PodAttachment>();
  readonly waits: { pod: PodAttachment; signal: AbortSignal }[] = [];
  readonly gates = new Map<string, ReturnType<typeof deferred>>();

  /** The gate `captured` of pod `namespace/name` waits on (made on first use). */
  gate(pod: string): ReturnType<typeof deferred> {
    if (!this.gates.has(pod)) this.gates.set(pod, deferred());
    return this.gates.get(pod)!;
  }

  attach(a: PodAttachment): Promise<void> {
    this.records.set(`${a.namespace}/${a.name}`, a);
    return Promise.resolve();
  }
  detach(containerId: string, ifName: string): Promise<void> {
    for (const [k, a] of this.records) {
      if (a.containerId === containerId && a.ifName === ifName) this.records.delete(k);
    }
    return Promise.resolve();
  }
  attachment(containerId: string, ifName: string): PodAttachment | undefined {
    return [...this.records.values()].find((a) =>
      a.containerId === containerId && a.ifName === ifName
    );
  }
  retain(valid: readonly { containerId: string; ifName: string }[]): Promise<void> {
    for (const [k, a] of this.records) {
      if (!valid.some((v) => v.containerId === a.containerId && v.ifName === a.ifName)) {
        this.records.delete(k);
      }
    }
    return Promise.resolve();
  }
  captured(pod: PodAttachment, signal: AbortSignal): Promise<void> {
    this.waits.push({ pod, signal });
    return this.gate(`${pod.namespace}/${pod.name}`).promise;
  }
}
