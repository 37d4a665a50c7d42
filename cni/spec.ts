/**
 * The CNI facts aether's chained plugin speaks (the CNI spec up to 1.1.0; containerd 1.6 speaks it
 * up to 1.0.0, so ADD, DEL, CHECK and VERSION are what it calls, STATUS and GC come from runtimes
 * with libcni ≥ 1.2): the verbs, the environment a runtime sets, `CNI_ARGS`, the error codes and
 * reply shapes, and the VERSION answer. Pure.
 * @module
 */

/** The plugin's `type` in a conflist, and the file name of its binary in the CNI bin dir. */
export const PLUGIN_TYPE = "aether-cni";

/** The spec versions the plugin accepts in a configuration (and says so to VERSION). */
export const SUPPORTED_VERSIONS: readonly string[] = ["0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"];

/** The verbs a runtime may call (`CNI_COMMAND`). */
export const VERBS = ["ADD", "DEL", "CHECK", "VERSION", "STATUS", "GC"] as const;
/** One of {@link VERBS}. */
export type Verb = typeof VERBS[number];

/** The spec's well-known error codes (1–99 are the spec's; 100+ a plugin's own). */
export const CODES = {
  incompatibleVersion: 1,
  unsupportedField: 2,
  unknownContainer: 3,
  invalidEnvironment: 4,
  ioFailure: 5,
  decodingFailure: 6,
  invalidConfig: 7,
  tryAgainLater: 11,
  notAvailable: 50,
  /** aether's own: CHECK found no record of the attachment. */
  notAttached: 100,
} as const;

/** The environment variables a runtime sets for a plugin (forwarded to the node agent). */
export const CNI_ENV: readonly string[] = [
  "CNI_COMMAND",
  "CNI_CONTAINERID",
  "CNI_NETNS",
  "CNI_IFNAME",
  "CNI_ARGS",
  "CNI_PATH",
];

/** What a plugin invocation ends with: its exit code, stdout and stderr. */
export interface Reply {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** A successful reply: `stdout` as given (a result, a VERSION answer, or nothing). */
export const ok = (stdout = ""): Reply => ({ exitCode: 0, stdout, stderr: "" });

/**
 * A CNI error reply (`{cniVersion, code, msg, details}` on stdout, exit 1): `msg` says what
 * failed, `details` what to do about it.
 */
export function cniError(cniVersion: string, code: number, msg: string, details?: string): Reply {
  const body = { cniVersion, code, msg, ...(details ? { details } : {}) };
  return { exitCode: 1, stdout: JSON.stringify(body) + "\n", stderr: "" };
}

/**
 * The VERSION answer. Its `cniVersion` is the one asked for when supported (the spec's example
 * echoes the configuration's), else the newest containerd 1.6 knows.
 */
export function versionAnswer(asked?: string): string {
  const cniVersion = asked && SUPPORTED_VERSIONS.includes(asked) ? asked : "1.0.0";
  return JSON.stringify({ cniVersion, supportedVersions: SUPPORTED_VERSIONS }) + "\n";
}

/** Whether spec version `a` is at least `b` (dotted numbers; pure). */
export function versionAtLeast(a: string, b: string): boolean {
  const pa = a.split(".").map(Number), pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d > 0;
  }
  return true;
}

/** The pod a Kubernetes runtime names in `CNI_ARGS`. */
export interface PodArgs {
  namespace?: string;
  name?: string;
  uid?: string;
  infraContainerId?: string;
}

/** The `CNI_ARGS` keys aether reads (containerd and CRI-O set them for every pod sandbox). */
const POD_KEYS: Readonly<Record<string, keyof PodArgs>> = {
  K8S_POD_NAMESPACE: "namespace",
  K8S_POD_NAME: "name",
  K8S_POD_UID: "uid",
  K8S_POD_INFRA_CONTAINER_ID: "infraContainerId",
};

/**
 * `CNI_ARGS` read leniently (`K=V;K=V`, a pair split at its first `=`, the last of a key wins,
 * empty values are absent, nothing is an error): what the skip decision reads, exactly as the
 * static forwarder (cni/forwarder.c) reads it.
 */
export function lenientPodArgs(raw: string | undefined): PodArgs {
  const out: PodArgs = {};
  for (const pair of (raw ?? "").split(";")) {
    const eq = pair.indexOf("=");
    if (eq < 0) continue;
    const field = Object.hasOwn(POD_KEYS, pair.slice(0, eq)) ? POD_KEYS[pair.slice(0, eq)] : "";
    const value = pair.slice(eq + 1);
    if (!field) continue;
    if (value) out[field] = value;
    else delete out[field];
  }
  return out;
}

/**
 * `CNI_ARGS` read as libcni's `types.LoadArgs` does: every pair must be `K=V`; a key aether does
 * not know is an error unless `IgnoreUnknown` is `1` or `true` (any case). Returns the pod, or
 * the error message.
 */
export function strictPodArgs(raw: string | undefined): PodArgs | string {
  if (!raw) return {};
  const pairs: [string, string][] = [];
  for (const pair of raw.split(";")) {
    const kv = pair.split("=");
    if (kv.length !== 2 || kv[0] === "") return `CNI_ARGS: invalid pair ${JSON.stringify(pair)}`;
    pairs.push([kv[0], kv[1]]);
  }
  const ignore = pairs.findLast(([k]) => k === "IgnoreUnknown")?.[1];
  if (ignore !== undefined && !/^(1|0|true|false)$/i.test(ignore)) {
    return `CNI_ARGS: IgnoreUnknown must be 1, 0, true or false, not ${JSON.stringify(ignore)}`;
  }
  const ignoreUnknown = ignore !== undefined && /^(1|true)$/i.test(ignore);
  const out: PodArgs = {};
  for (const [k, v] of pairs) {
    if (k === "IgnoreUnknown") continue;
    if (Object.hasOwn(POD_KEYS, k)) out[POD_KEYS[k]] = v;
    else if (!ignoreUnknown) return `CNI_ARGS: unknown argument ${JSON.stringify(k)}`;
  }
  return out;
}
