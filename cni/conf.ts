/**
 * The plugin's network configuration (its conflist entry, as the runtime hands it over with the
 * list's `name`, `cniVersion`, `prevResult` and `runtimeConfig` added) and the skip decision: which
 * invocations pass `prevResult` on without asking the node agent. The decision is the one rule the
 * static forwarder (cni/forwarder.c) also applies by itself, so skipped pods never wait for the
 * agent; conf_test.ts holds the two to the same answers. Pure.
 * @module
 */
import { lenientPodArgs } from "./spec.ts";

/** The pod annotation that opts a pod out of capture: `aether.io/capture: "false"`. */
export const CAPTURE_ANNOTATION = "aether.io/capture";

/** The capability that makes containerd and CRI-O pass the pod's annotations in `runtimeConfig`. */
export const POD_ANNOTATIONS_CAPABILITY = "io.kubernetes.cri.pod-annotations";

/** Namespaces skipped when the configuration names none. */
export const DEFAULT_EXCLUDED_NAMESPACES: readonly string[] = ["kube-system"];

/** Where the node agent listens for the plugin (a host path). */
export const DEFAULT_SOCKET_PATH = "/run/aether/cni.sock";

/** How long the agent may take to confirm a pod is captured, by default. */
export const DEFAULT_TIMEOUT_SECONDS = 30;

/** The longest bound a configuration may set: the kubelet gives a sandbox 2 minutes in all. */
export const MAX_TIMEOUT_SECONDS = 100;

/** What the forwarder waits beyond the agent's bound before it answers "try again" itself. */
export const FORWARDER_MARGIN_SECONDS = 5;

/** The largest configuration (stdin) a plugin invocation may carry. */
export const MAX_CONF_BYTES = 1 << 20;

/** The plugin's own keys of its conflist entry. */
export interface PluginKeys {
  /** The node agent's socket (default {@link DEFAULT_SOCKET_PATH}). */
  socketPath?: string;
  /** The agent's bound on a capture, in seconds (default {@link DEFAULT_TIMEOUT_SECONDS}). */
  timeoutSeconds?: number;
  /** Namespaces whose pods are never captured (default {@link DEFAULT_EXCLUDED_NAMESPACES}). */
  excludeNamespaces?: string[];
}

/** Why an invocation is skipped, or undefined when the agent decides. */
export type SkipReason = "not a Kubernetes pod" | "namespace excluded" | "pod opted out";

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/**
 * Whether an ADD or CHECK skips capture (any other verb never does): not a Kubernetes pod
 * (`CNI_ARGS` lacks `K8S_POD_NAMESPACE` or `K8S_POD_NAME`), a namespace the configuration
 * excludes (`excludeNamespaces`, when it is an array: its strings; else the default), or a pod
 * annotated `aether.io/capture: "false"` (through the pod-annotations capability). `conf` is the
 * parsed stdin; a configuration that is not a JSON object skips nothing.
 */
export function skipReason(
  env: Readonly<Record<string, string | undefined>>,
  conf: unknown,
): SkipReason | undefined {
  if (env.CNI_COMMAND !== "ADD" && env.CNI_COMMAND !== "CHECK") return undefined;
  if (!isObject(conf)) return undefined;
  const pod = lenientPodArgs(env.CNI_ARGS);
  if (!pod.namespace || !pod.name) return "not a Kubernetes pod";
  const listed = conf.excludeNamespaces;
  const excluded = Array.isArray(listed) ? listed : DEFAULT_EXCLUDED_NAMESPACES;
  if (excluded.includes(pod.namespace)) return "namespace excluded";
  const runtime = conf.runtimeConfig;
  const annotations = isObject(runtime) ? runtime[POD_ANNOTATIONS_CAPABILITY] : undefined;
  if (isObject(annotations) && annotations[CAPTURE_ANNOTATION] === "false") return "pod opted out";
  return undefined;
}

/** A string of 1 to `max` ASCII characters, none NUL (what a unix socket path can be). */
const isAscii = (s: unknown, max: number): s is string =>
  typeof s === "string" && s.length > 0 && s.length <= max &&
  [...s].every((c) => c.charCodeAt(0) > 0 && c.charCodeAt(0) < 0x80);

/** The socket a configuration names (1–107 ASCII characters: `sun_path`), else the default. */
export function socketPathOf(conf: unknown): string {
  const s = isObject(conf) ? conf.socketPath : undefined;
  return isAscii(s, 107) ? s : DEFAULT_SOCKET_PATH;
}

/**
 * The agent's bound in seconds: the configuration's `timeoutSeconds` when it is a number in
 * (0, {@link MAX_TIMEOUT_SECONDS}], else the default.
 */
export function timeoutSecondsOf(conf: unknown): number {
  const t = isObject(conf) ? conf.timeoutSeconds : undefined;
  return typeof t === "number" && t > 0 && t <= MAX_TIMEOUT_SECONDS ? t : DEFAULT_TIMEOUT_SECONDS;
}

/** The configuration's `cniVersion` (1–63 ASCII characters), else "1.0.0" (for error replies). */
export function cniVersionOf(conf: unknown): string {
  const v = isObject(conf) ? conf.cniVersion : undefined;
  return isAscii(v, 63) ? v : "1.0.0";
}

/** The deepest nesting of arrays and objects a configuration may have (the forwarder's bound). */
export const MAX_CONF_DEPTH = 64;

/** How deeply `v` nests arrays and objects (a scalar: 0). */
function depthOf(v: unknown, limit: number): number {
  if (typeof v !== "object" || v === null || limit < 0) return 0;
  let deepest = 0;
  for (const x of Object.values(v)) deepest = Math.max(deepest, depthOf(x, limit - 1));
  return 1 + deepest;
}

/**
 * Parses stdin as JSON; undefined when it is not JSON, or nests deeper than
 * {@link MAX_CONF_DEPTH} (pure). A byte-order mark is not JSON: decode stdin keeping it.
 */
export function parseConf(stdin: string): unknown {
  let v: unknown;
  try {
    v = JSON.parse(stdin);
  } catch {
    return undefined;
  }
  return depthOf(v, MAX_CONF_DEPTH) > MAX_CONF_DEPTH ? undefined : v;
}

/** Decodes stdin for {@link parseConf}: UTF-8, a byte-order mark kept (so it is no JSON). */
export const decodeStdin = (bytes: Uint8Array): string =>
  new TextDecoder("utf-8", { ignoreBOM: true }).decode(bytes);
