/**
 * aether's CNI plugin (cni/main.ts) run as a container runtime runs it: chained after the pod
 * network's plugin, with the Kubernetes pod in `CNI_ARGS` and the bridge's result as `prevResult`.
 * ADD returns once the node agent (`--cni-socket`) has the pod's capture in place; DEL forgets it.
 * @module
 */
import { join } from "node:path";
import { projectRoot } from "../testbed/peers/mod.ts";
import type { NetPod } from "./netns.ts";

/** The Kubernetes pod a sandbox is for. */
export interface PodRef {
  namespace: string;
  name: string;
  uid: string;
}

/** Runs the plugin's `command` for `pod`'s sandbox; throws with its error reply on failure. */
export async function aetherCni(
  command: "ADD" | "DEL",
  pod: NetPod,
  ref: PodRef,
  socketPath: string,
): Promise<void> {
  const conf = {
    cniVersion: "1.0.0",
    name: "aether-process-pods",
    type: "aether-cni",
    socketPath,
    prevResult: pod.result,
  };
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", join(projectRoot, "cni", "main.ts")],
    env: {
      CNI_COMMAND: command,
      CNI_CONTAINERID: pod.netns,
      CNI_NETNS: pod.netnsPath,
      CNI_IFNAME: "eth0",
      CNI_PATH: "/usr/lib/cni",
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${ref.namespace};K8S_POD_NAME=${ref.name};` +
        `K8S_POD_INFRA_CONTAINER_ID=${pod.netns};K8S_POD_UID=${ref.uid}`,
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify(conf)));
  await w.close();
  const out = await child.output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
    throw new Error(`aether-cni ${command} ${ref.namespace}/${ref.name}: ${text.trim()}`);
  }
}
