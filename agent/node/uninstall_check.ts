/**
 * The node agent's `--uninstall-when-gone` question (cni/uninstall_check.ts), over lib/kube's
 * client, loaded only when asked.
 * @module
 */
import {
  type DaemonSetRef,
  releaseUninstalling,
  UNINSTALL_RETRY_MS,
  type UninstallVerdict,
} from "../../cni/mod.ts";

/** Where the agent's API credentials come from (NodeAgentOptions' fields of that name). */
export interface KubeCredentials {
  kubeconfig?: string;
  kubeContext?: string;
}

/**
 * --uninstall-when-gone's question, over lib/kube's client (loaded then): the agent's kubeconfig,
 * else the pod's service account. Credentials that cannot be loaded are no answer.
 */
export function uninstallCheck(
  opts: KubeCredentials,
  ds: DaemonSetRef,
): () => Promise<UninstallVerdict> {
  return async () => {
    const { KubeClient } = await import("../../lib/kube/mod.ts");
    let client: InstanceType<typeof KubeClient>;
    try {
      client = new KubeClient(
        opts.kubeconfig ? { kubeconfig: opts.kubeconfig, context: opts.kubeContext } : {
          inCluster: true,
        },
      );
    } catch (e) {
      return { uninstalling: false, known: false, reason: `no API credentials: ${e}` };
    }
    try {
      return await releaseUninstalling(
        ds,
        (path, signal) => client.request("GET", path, undefined, undefined, signal),
        { retryForMs: UNINSTALL_RETRY_MS },
      );
    } finally {
      client.close();
    }
  };
}
