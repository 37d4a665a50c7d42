/**
 * What the two-API-server MCS tests create through the API servers (e2e/mcs_kube_clusters.ts) and
 * how they call: `web` (a Deployment of echo-basic, its Service, a ServiceExport) in one cluster,
 * a caller pod (pause) in another, and e2e/mcs_client.ts run inside the caller's netns as
 * `kubectl exec` would.
 * @module
 */
import { ensurePeer } from "../testbed/peers/mod.ts";
import { waitFor } from "./peers/proc.ts";
import type { KubeMcsCluster } from "./mcs_kube_clusters.ts";
import { ECHO_HTTP_PORT, ECHO_IMAGE, PAUSE_IMAGE } from "./pod_images.ts";

/** The namespace of the scene. */
export const NS = "shop";
/** The MCS API's path prefix. */
export const MCS = "/apis/multicluster.x-k8s.io/v1beta1";
/** web's Service port (→ echo-basic's 3000). */
export const HTTP = { name: "http", protocol: "TCP", port: 8080, appProtocol: "http" };
/** The clusterset name of `web`. */
export const WEB_CLUSTERSET = `web.${NS}.svc.clusterset.local`;

/** What e2e/mcs_client.ts prints. */
export interface CallResult {
  addresses: string[];
  counts: Record<string, number>;
  first: { status: number; headers?: Record<string, string> };
}

/**
 * Runs e2e/mcs_client.ts in `cluster`'s running pod `pod` against `name`, resolved as the pod's
 * processes resolve: its resolv.conf's cluster DNS, captured to the node agent's responder.
 */
export async function call(
  cluster: KubeMcsCluster,
  pod: string,
  name: string,
  count = 1,
): Promise<CallResult> {
  const running = cluster.runner.pod(NS, pod);
  if (!running) throw new Error(`pod ${NS}/${pod} is not running in ${cluster.name}`);
  const out = await new Deno.Command(await ensurePeer("ip"), {
    args: ["netns", "exec", running.netns.netns, Deno.execPath(), "run", "-A"]
      .concat(["e2e/mcs_client.ts", "--name", name, "--count", String(count)]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`mcs_client: ${new TextDecoder().decode(out.stderr)}`);
  const text = new TextDecoder().decode(out.stdout).trim();
  return JSON.parse(text.split("\n").pop()!) as CallResult;
}

/** A Pod of one container, in the scene's namespace. */
export function pod(name: string, serviceAccount: string, image: string) {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NS },
    spec: { serviceAccountName: serviceAccount, containers: [{ name: "main", image }] },
  };
}

const webDeployment = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: NS },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web" } },
      spec: {
        serviceAccountName: "web",
        containers: [{
          name: "echo",
          image: ECHO_IMAGE,
          // Ready once it listens (the pod runner's readiness): only then an endpoint anywhere.
          ports: [{ containerPort: ECHO_HTTP_PORT }],
          env: [
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            { name: "NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
            { name: "SERVICE_NAME", value: "web" },
          ],
        }],
      },
    },
  },
};

/**
 * Creates web's Deployment, Service and ServiceExport in `cluster`'s API server and returns the
 * name of its pod once the pod runner runs it.
 */
export async function exportWeb(cluster: KubeMcsCluster): Promise<string> {
  await cluster.create(`/apis/apps/v1/namespaces/${NS}/deployments`, webDeployment);
  await cluster.create(`/api/v1/namespaces/${NS}/services`, {
    metadata: { name: "web", namespace: NS },
    spec: { selector: { app: "web" }, ports: [{ ...HTTP, targetPort: ECHO_HTTP_PORT }] },
  });
  await cluster.create(`${MCS}/namespaces/${NS}/serviceexports`, {
    apiVersion: "multicluster.x-k8s.io/v1beta1",
    kind: "ServiceExport",
    metadata: { name: "web", namespace: NS },
  });
  return await waitFor(`web's pod running in ${cluster.name}`, () => {
    const p = cluster.runner.pods().find((x) => x.name.startsWith("web-"));
    return Promise.resolve(p?.name);
  }, 180_000);
}

/** Creates the caller pod (service account `caller`) and waits until it runs. */
export async function startCaller(cluster: KubeMcsCluster): Promise<void> {
  await cluster.create(`/api/v1/namespaces/${NS}/pods`, pod("caller", "caller", PAUSE_IMAGE));
  await waitFor(
    `caller running in ${cluster.name}`,
    () => Promise.resolve(cluster.runner.pod(NS, "caller")),
    180_000,
  );
}

/** The ServiceImport `web` in `cluster` once it has a VIP; returns the VIP. */
export async function importVip(cluster: KubeMcsCluster): Promise<string> {
  const si = await waitFor(`ServiceImport web in ${cluster.name} with a VIP`, async () => {
    const r = await cluster.kwok.kube.request("GET", `${MCS}/namespaces/${NS}/serviceimports/web`);
    return r.json?.spec?.ips?.length ? r.json : undefined;
  }, 120_000);
  return si.spec.ips[0];
}

/** `t.step` that prints the scene's last log lines when the step fails. */
export function stepWithLogs(t: Deno.TestContext, logs: string[]) {
  return (name: string, fn: () => Promise<void>) =>
    t.step(name, async () => {
      try {
        await fn();
      } catch (e) {
        console.error(`step "${name}" failed; the last log lines:\n${logs.slice(-80).join("\n")}`);
        throw e;
      }
    });
}
