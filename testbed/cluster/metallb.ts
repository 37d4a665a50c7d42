/**
 * The local cluster's LoadBalancer implementation: the MetalLB controller (IPAM only), built from
 * the Go module proxy (peer `metallb-controller`), run as a pod from a locally built image, with
 * the CRDs, RBAC and Deployment of the module's own `config/manifests/metallb-native.yaml` and an
 * IPAddressPool for the layout's LoadBalancer range.
 *
 * No speaker: the host routes the whole range into the node netns (testbed/cluster/net.ts), and
 * kube-proxy answers for every `status.loadBalancer.ingress` IP there (its KUBE-SERVICES chain
 * matches LoadBalancer IPs as destinations), so nothing has to announce the addresses (ARP or BGP
 * is what the speaker does on a real network). See docs/kubernetes.md.
 * @module
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import type { Logger } from "../../lib/log/mod.ts";
import { goPeers } from "../peers/mod.ts";
import { goModuleDir, goPeerVersion } from "../peers/mod.ts";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { run } from "../peers/mod.ts";
import type { Api } from "./api.ts";
import { imageNames } from "./images.ts";

/** The namespace the upstream manifest installs into. */
export const metallbNamespace = "metallb-system";

/** The IPAddressPool the local cluster's Services draw from. */
export const poolName = "aether-local";

// deno-lint-ignore no-explicit-any
type Doc = Record<string, any>;

/** Objects of the upstream manifest that only the speaker or the webhooks use. */
function speakerOrWebhook(d: Doc): boolean {
  const name = String(d.metadata?.name ?? "");
  if (d.kind === "DaemonSet" || d.kind === "ValidatingWebhookConfiguration") return true;
  if (d.kind === "Service" && name === "metallb-webhook-service") return true;
  if (name.includes("speaker") || name === "pod-lister") return true;
  return false;
}

/**
 * The objects to apply (pure): the upstream manifest's Namespace, CRDs, controller RBAC and
 * Deployment — the speaker and the webhooks left out — with the Deployment running `image` with
 * `--webhook-mode=disabled` (nothing here could serve the webhook's TLS endpoint: the CRDs are
 * validated by their own OpenAPI schemas only) and the one CRD conversion webhook dropped (bgppeers;
 * unused: no BGP here); then an IPAddressPool over `cidr`.
 */
export function metallbObjects(upstream: string, image: string, cidr: string): Doc[] {
  const docs = parseAllDocuments(upstream).map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => !!d && !speakerOrWebhook(d));
  for (const d of docs) {
    if (d.kind === "CustomResourceDefinition" && d.spec?.conversion?.strategy === "Webhook") {
      d.spec.conversion = { strategy: "None" };
    }
    if (d.kind === "Deployment") {
      const c = d.spec.template.spec.containers[0];
      c.image = image;
      c.imagePullPolicy = "Never";
      c.args = [...(c.args ?? []), "--webhook-mode=disabled", "--disable-cert-rotation"];
      c.ports = c.ports?.filter((p: Doc) => p.name !== "webhook-server");
    }
  }
  if (!docs.some((d) => d.kind === "Deployment")) {
    throw new Error("the MetalLB manifest has no controller Deployment");
  }
  docs.push({
    apiVersion: "metallb.io/v1beta1",
    kind: "IPAddressPool",
    metadata: { name: poolName, namespace: metallbNamespace },
    // Not the range's .0 and .255 (some clients refuse them).
    spec: { addresses: [cidr], avoidBuggyIPs: true },
  });
  return docs;
}

/** The upstream manifest of the pinned MetalLB module version (downloaded into Go's module cache). */
export async function upstreamManifest(): Promise<string> {
  const version = await goPeerVersion(projectRoot, goPeers["metallb-controller"]);
  const dir = await goModuleDir("go.universe.tf/metallb", version);
  return await Deno.readTextFile(join(dir, "config", "manifests", "metallb-native.yaml"));
}

/**
 * Installs MetalLB into a running cluster (idempotent: server-side apply) and waits until the
 * controller is Available and the pool exists. The image must already be imported.
 */
export async function ensureMetallb(kubeconfig: string, cidr: string, log: Logger): Promise<void> {
  const started = Date.now();
  const kubectl = await ensurePeer("kubectl");
  const k = (args: string[]) => run(kubectl, [`--kubeconfig=${kubeconfig}`, ...args]);
  const objects = metallbObjects(await upstreamManifest(), imageNames.metallb, cidr);
  const pool = objects.filter((d) => d.kind === "IPAddressPool");
  const rest = objects.filter((d) => d.kind !== "IPAddressPool");
  const apply = async (docs: Doc[]) => {
    const file = await Deno.makeTempFile({ prefix: "aether-metallb-", suffix: ".json" });
    try {
      await Deno.writeTextFile(
        file,
        JSON.stringify({ apiVersion: "v1", kind: "List", items: docs }),
      );
      await k([
        "apply",
        "--server-side",
        "--force-conflicts",
        "--field-manager=aether",
        "-f",
        file,
      ]);
    } finally {
      await Deno.remove(file).catch(() => {});
    }
  };
  await apply(rest);
  await k([
    "wait",
    "--for=condition=Established",
    "--timeout=120s",
    "crd/ipaddresspools.metallb.io",
  ]);
  await apply(pool);
  await k([
    "-n",
    metallbNamespace,
    "rollout",
    "status",
    "deployment/controller",
    "--timeout=300s",
  ]);
  log.info("MetalLB controller ready", { pool: cidr, ms: Date.now() - started });
}

/** Whether MetalLB already runs in the cluster: the controller Available and the pool present. */
export async function metallbReady(api: Api): Promise<boolean> {
  const ns = `/apis/apps/v1/namespaces/${metallbNamespace}/deployments/controller`;
  const d = await api.request("GET", ns);
  if (d.status !== 200 || !(d.json?.status?.availableReplicas >= 1)) return false;
  const image = d.json?.spec?.template?.spec?.containers?.[0]?.image;
  if (image !== imageNames.metallb) return false;
  const p = await api.request(
    "GET",
    `/apis/metallb.io/v1beta1/namespaces/${metallbNamespace}/ipaddresspools/${poolName}`,
  );
  return p.status === 200;
}
