/**
 * The Gateway API CRD channel of the conformance cluster. The chart installs the standard
 * channel; TCPRoute and UDPRoute exist only in the experimental one, and the suite refuses a mix
 * of channels (`multiple gateway API CRDs channels detected`). So a run switches the cluster to
 * the experimental channel's vendored CRDs (tools/gateway-api/, the same served and storage
 * versions as standard's plus the experimental-only kinds) before the chart goes in, and back to
 * the standard channel afterwards: the standard CRDs applied over them (the upstream
 * `safe-upgrades` admission policy allows that direction) and the experimental-only CRDs deleted.
 * @module
 */
import { join } from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { poll } from "../cluster/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { run } from "../peers/mod.ts";

/** A Gateway API CRD channel. */
export type Channel = "standard" | "experimental";

/** The vendored CRD folder of a channel (the bundle the suite and the chart are built for). */
export const channelDir = (channel: Channel): string =>
  join(projectRoot, "tools", "gateway-api", "v1.5.1", channel);

/**
 * The upstream admission policy (and binding) that refuses experimental CRDs over standard ones;
 * it ships in each channel's folder and the chart's crds/.
 */
export const safeUpgrades = "safe-upgrades.gateway.networking.k8s.io";

/** One document of a channel's YAML files. */
interface Doc {
  kind?: string;
  metadata?: { name?: string };
}

function documents(files: string[]): Doc[] {
  return files.flatMap((text) => parseAllDocuments(text).map((d) => d.toJS() as Doc | null))
    .filter((o): o is Doc => o !== null && typeof o === "object");
}

/** The CRD names (`metadata.name`) in a channel's YAML files, sorted (pure). */
export function crdNames(files: string[]): string[] {
  return documents(files)
    .filter((o) => o.kind === "CustomResourceDefinition" && o.metadata?.name)
    .map((o) => o.metadata?.name as string)
    .sort();
}

const policyKinds = ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"];

/**
 * A channel's YAML files as two multi-document YAML texts (pure): the admission policies (and
 * their bindings), and everything else — the CRDs. A switch to experimental applies the CRDs with
 * no policy in the way and the policies after them; applied together, a policy the API server
 * still enforced at the first attempt would come back and refuse every retry.
 */
export function splitChannel(files: string[]): { crds: string; policies: string } {
  const docs = documents(files);
  const yaml = (list: Doc[]) => list.map((o) => stringify(o)).join("---\n");
  return {
    crds: yaml(docs.filter((o) => !policyKinds.includes(o.kind ?? ""))),
    policies: yaml(docs.filter((o) => policyKinds.includes(o.kind ?? ""))),
  };
}

const marker = "Error from server";

/**
 * What a failed `kubectl apply` says, in one line (pure): its first `Error from server` line
 * (kubectl writes one per refused object) and how many more there were, or its last line.
 */
export function refusal(message: string): string {
  const lines = message.split("\n").map((l) => l.trim()).filter((l) => l !== "");
  const refused = lines.filter((l) => l.includes(marker)).map((l) => l.slice(l.indexOf(marker)));
  if (refused.length === 0) return lines.at(-1) ?? "";
  return refused.length === 1 ? refused[0] : `${refused[0]} (and ${refused.length - 1} more)`;
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

/** kubectl on one cluster. */
type Kubectl = (args: string[], stdin?: string) => Promise<string>;

const applyArgs = (from: string) => ["apply", "--server-side", "--force-conflicts", "-f", from];

/** How long a switch to experimental keeps retrying while CRD updates are refused. */
const switchTimeoutMs = 60_000;

/**
 * Applies the experimental channel over the standard one. The `safe-upgrades` policy refuses
 * that, so it is deleted; the API server enforces a deleted policy until its admission cache
 * drops it a moment later, so the CRDs are retried, deleting the policy again before each try
 * (the folder's policy must not be applied before every CRD is in: it would hold them). Then the
 * policy goes back as the folder has it.
 */
async function switchToExperimental(k: Kubectl, log: Logger): Promise<void> {
  const { crds, policies } = splitChannel(await channelFiles("experimental"));
  const started = Date.now();
  let attempt = 0;
  const what = "the experimental CRDs applied (every try refused: see which admission policy " +
    "holds them with `kubectl get validatingadmissionpolicybindings`)";
  await poll(what, async () => {
    attempt++;
    try {
      await k(["delete", "validatingadmissionpolicybinding,validatingadmissionpolicy", safeUpgrades]
        .concat("--ignore-not-found"));
      await k(applyArgs("-"), crds);
      return true;
    } catch (e) {
      log.info("experimental CRDs refused; retrying", {
        attempt,
        ms: Date.now() - started,
        refusal: refusal((e as Error).message),
      });
      throw e;
    }
  }, switchTimeoutMs);
  await k(applyArgs("-"), policies);
  log.info("experimental CRDs applied; safe-upgrades policy back", {
    attempts: attempt,
    ms: Date.now() - started,
  });
}

/**
 * Puts the cluster's Gateway API CRDs on `channel` (idempotent) and waits until each is
 * Established. Call it with no Gateway API objects left (before the chart goes in, after it went).
 */
export async function useChannel(
  kubeconfig: string,
  channel: Channel,
  log: Logger = new Logger("conformance.channel"),
): Promise<void> {
  const kubectl = await ensurePeer("kubectl");
  const k: Kubectl = (args, stdin) =>
    run(kubectl, [`--kubeconfig=${kubeconfig}`, ...args], { stdin });
  if (channel === "experimental") {
    await switchToExperimental(k, log);
  } else {
    await k(applyArgs(channelDir(channel)));
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
