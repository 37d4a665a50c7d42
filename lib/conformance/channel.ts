/**
 * The Gateway API CRD channel of the conformance cluster. The chart installs the standard
 * channel; TCPRoute and UDPRoute exist only in the experimental one, and the suite refuses a mix
 * of channels (`multiple gateway API CRDs channels detected`). So a run switches the cluster to
 * the experimental channel's vendored CRDs (lib/gatewayapi/crds, the same served and storage
 * versions as standard's plus the experimental-only kinds) before the chart goes in, and back to
 * the standard channel afterwards: the standard CRDs applied over them (the upstream
 * `safe-upgrades` admission policy allows that direction) and the experimental-only CRDs deleted.
 * @module
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { poll } from "../cluster/api.ts";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { run } from "../peers/util.ts";

/** A Gateway API CRD channel. */
export type Channel = "standard" | "experimental";

/** The vendored CRD folder of a channel (the bundle the suite and the chart are built for). */
export const channelDir = (channel: Channel): string =>
  join(projectRoot, "lib", "gatewayapi", "crds", "v1.5.1", channel);

/**
 * The upstream admission policy (and binding) that refuses experimental CRDs over standard ones;
 * it ships in each channel's folder and the chart's crds/.
 */
export const safeUpgrades = "safe-upgrades.gateway.networking.k8s.io";

/** The CRD names (`metadata.name`) in a channel's YAML files, sorted (pure). */
export function crdNames(files: string[]): string[] {
  const names: string[] = [];
  for (const text of files) {
    for (const d of parseAllDocuments(text)) {
      const o = d.toJS() as { kind?: string; metadata?: { name?: string } } | null;
      if (o?.kind === "CustomResourceDefinition" && o.metadata?.name) names.push(o.metadata.name);
    }
  }
  return names.sort();
}

async function channelFiles(channel: Channel): Promise<string[]> {
  const dir = channelDir(channel);
  const files: string[] = [];
  for await (const e of Deno.readDir(dir)) {
    if (e.isFile && e.name.endsWith(".yaml")) {
      files.push(await Deno.readTextFile(join(dir, e.name)));
    }
  }
  return files;
}

/** CRDs of the experimental channel that the standard one does not have (TCPRoute, UDPRoute…). */
export async function experimentalOnly(): Promise<string[]> {
  const standard = new Set(crdNames(await channelFiles("standard")));
  return crdNames(await channelFiles("experimental")).filter((n) => !standard.has(n));
}

/**
 * Puts the cluster's Gateway API CRDs on `channel` (idempotent) and waits until each is
 * Established. Call it with no Gateway API objects left (before the chart goes in, after it went).
 */
export async function useChannel(kubeconfig: string, channel: Channel): Promise<void> {
  const kubectl = await ensurePeer("kubectl");
  const k = (args: string[]) => run(kubectl, [`--kubeconfig=${kubeconfig}`, ...args]);
  const apply = ["apply", "--server-side", "--force-conflicts", "-f", channelDir(channel)];
  if (channel === "experimental") {
    // The policy refuses exactly this switch; the folder brings it back with the CRDs.
    await k(["delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", safeUpgrades]
      .concat("--ignore-not-found"));
    // The API server drops a deleted policy from its admission cache a moment later: retry.
    await poll("experimental CRDs applied", () => k(apply).then(() => true), 60_000);
  } else {
    await k(apply);
    const extra = await experimentalOnly();
    await k(["delete", "crd", ...extra, "--ignore-not-found", "--wait", "--timeout=120s"]);
  }
  const names = crdNames(await channelFiles(channel));
  await k([
    "wait",
    "--for=condition=Established",
    "--timeout=120s",
    ...names.map((n) => `crd/${n}`),
  ]);
}
