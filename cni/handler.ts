/**
 * The node agent's side of a plugin invocation: parse the forwarded environment and
 * configuration, decide (skip, or record the pod and wait until it is captured), reply as the
 * plugin. What it does per verb:
 *
 * - ADD: skipped invocations print `prevResult` at once. Otherwise the pod's attachment (netns
 *   path, IPs from `prevResult`) is recorded, then the reply waits until the pod is captured, at
 *   most `timeoutSeconds`; past it the reply is error 11 ("try again later": the runtime tears the
 *   sandbox down and the kubelet retries), so no app container starts uncaptured. Success prints
 *   `prevResult` unchanged.
 * - DEL: forgets the attachment of this container and interface; fine when there is none, when
 *   `CNI_NETNS` is gone, and when repeated.
 * - CHECK: the attachment must be recorded (error 100 otherwise) and captured (11 on timeout).
 * - STATUS: ready (the agent answered). GC: forgets every attachment not listed valid.
 * - VERSION: the supported versions.
 *
 * Bad input (no CNI_COMMAND, stdin that is not JSON, a config version it does not speak, …) is a
 * CNI error reply, never an exception. The I/O is the caller's (the {@link Attachments} it passes).
 * @module
 */
import {
  cniVersionOf,
  MAX_TIMEOUT_SECONDS,
  parseConf,
  skipReason,
  timeoutSecondsOf,
} from "./conf.ts";
import type { ForwardedRequest } from "./protocol.ts";
import {
  cniError,
  CODES,
  ok,
  type Reply,
  strictPodArgs,
  SUPPORTED_VERSIONS,
  type Verb,
  VERBS,
  versionAnswer,
  versionAtLeast,
} from "./spec.ts";

/** A pod's network attachment as the runtime reported it on ADD. */
export interface PodAttachment {
  namespace: string;
  name: string;
  /** The pod's UID (`K8S_POD_UID`), when the runtime passes it. */
  uid?: string;
  /** The sandbox (`CNI_CONTAINERID`). */
  containerId: string;
  ifName: string;
  /** The pod's network namespace (`CNI_NETNS`). */
  netnsPath: string;
  /** The pod's addresses, from `prevResult.ips` (without prefix length). */
  ips: string[];
}

/** Where attachments are kept, and how capture is awaited (the agent's; a test's fake). */
export interface Attachments {
  /** Records `a` (durably) before it resolves, replacing the pod's earlier one. */
  attach(a: PodAttachment): Promise<void>;
  /** Forgets the attachment of `containerId` on `ifName`, if any. */
  detach(containerId: string, ifName: string): Promise<void>;
  /** The attachment of `containerId` on `ifName`, if recorded. */
  attachment(containerId: string, ifName: string): PodAttachment | undefined;
  /** Forgets every attachment not in `valid` (GC). */
  retain(valid: readonly { containerId: string; ifName: string }[]): Promise<void>;
  /** Resolves once `a` is captured; `signal` aborts when the reply stops waiting. */
  captured(a: PodAttachment, signal: AbortSignal): Promise<void>;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The addresses of a result's `ips` (spec ≥ 0.3.0: `{address: "10.0.0.5/24"}`), pure. */
export function resultIps(result: unknown): string[] {
  const ips = isObject(result) ? result.ips : undefined;
  if (!Array.isArray(ips)) return [];
  return ips.flatMap((ip) =>
    isObject(ip) && typeof ip.address === "string" && ip.address !== ""
      ? [ip.address.split("/")[0]]
      : []
  );
}

/** Checks the plugin's own keys (a wrong type is a config error, not a silent default). */
function confProblem(conf: Record<string, unknown>): string | undefined {
  const ex = conf.excludeNamespaces;
  if (ex !== undefined && !(Array.isArray(ex) && ex.every((n) => typeof n === "string"))) {
    return "excludeNamespaces must be a list of namespace names";
  }
  const t = conf.timeoutSeconds;
  if (t !== undefined && !(typeof t === "number" && t > 0 && t <= MAX_TIMEOUT_SECONDS)) {
    return `timeoutSeconds must be a number of seconds in (0, ${MAX_TIMEOUT_SECONDS}]`;
  }
  if (conf.socketPath !== undefined && typeof conf.socketPath !== "string") {
    return "socketPath must be a path";
  }
  return undefined;
}

/** Handles one forwarded invocation; never throws. */
export async function handleCni(req: ForwardedRequest, store: Attachments): Promise<Reply> {
  const env = req.env;
  const verb = env.CNI_COMMAND as Verb | undefined;
  const conf = parseConf(req.stdin);
  const version = cniVersionOf(conf);
  const fail = (code: number, msg: string, details?: string) =>
    cniError(version, code, msg, details);
  if (!verb) return fail(CODES.invalidEnvironment, "CNI_COMMAND is not set");
  if (!VERBS.includes(verb)) return fail(CODES.invalidEnvironment, `unknown CNI_COMMAND ${verb}`);
  if (verb === "VERSION") {
    return ok(versionAnswer(isObject(conf) ? String(conf.cniVersion ?? "") : ""));
  }
  if (!isObject(conf)) {
    return fail(CODES.decodingFailure, "the network configuration on stdin is not a JSON object");
  }
  const prev = conf.prevResult;
  const noPrev = () =>
    fail(
      CODES.invalidConfig,
      `aether-cni is a chained plugin and got no prevResult on ${verb}`,
      "list it after the pod network's own plugins in the conflist",
    );
  // Skipped pods first, with nothing else checked: the forwarder decides the same by itself.
  if (skipReason(env, conf)) {
    if (!isObject(prev)) return noPrev();
    return verb === "ADD" ? ok(JSON.stringify(prev) + "\n") : ok();
  }
  const containerId = env.CNI_CONTAINERID ?? "", ifName = env.CNI_IFNAME ?? "";
  const needIds = verb === "ADD" || verb === "DEL" || verb === "CHECK";
  if (needIds && !containerId) return fail(CODES.invalidEnvironment, "CNI_CONTAINERID is not set");
  if (needIds && !ifName) return fail(CODES.invalidEnvironment, "CNI_IFNAME is not set");
  // DEL whatever the rest says: a DEL that fails would keep the runtime from removing the pod.
  if (verb === "DEL") {
    try {
      await store.detach(containerId, ifName);
    } catch (e) {
      return fail(CODES.ioFailure, `aether could not forget the pod: ${(e as Error).message}`);
    }
    return ok();
  }
  if (typeof conf.cniVersion !== "string" || !SUPPORTED_VERSIONS.includes(conf.cniVersion)) {
    return fail(
      CODES.incompatibleVersion,
      `aether-cni does not speak cniVersion ${JSON.stringify(conf.cniVersion)}`,
      `supported: ${SUPPORTED_VERSIONS.join(", ")}`,
    );
  }
  const problem = confProblem(conf);
  if (problem) return fail(CODES.invalidConfig, problem);
  if ((verb === "STATUS" || verb === "GC") && !versionAtLeast(conf.cniVersion, "1.1.0")) {
    return fail(CODES.incompatibleVersion, `${verb} needs cniVersion 1.1.0 or later`);
  }
  if (verb === "CHECK" && !versionAtLeast(conf.cniVersion, "0.4.0")) {
    return fail(CODES.incompatibleVersion, "CHECK needs cniVersion 0.4.0 or later");
  }
  if (verb === "STATUS") return ok();
  if (verb === "GC") return await gc(conf, store, fail);

  if (!isObject(prev)) return noPrev();
  const pod = strictPodArgs(env.CNI_ARGS);
  if (typeof pod === "string") return fail(CODES.invalidEnvironment, pod);
  if (!pod.namespace || !LABEL.test(pod.namespace) || !pod.name || !NAME.test(pod.name)) {
    return fail(CODES.invalidEnvironment, "CNI_ARGS names no valid pod namespace and name");
  }
  const timeoutSeconds = timeoutSecondsOf(conf);
  if (verb === "CHECK") {
    const a = store.attachment(containerId, ifName);
    if (!a) {
      return fail(
        CODES.notAttached,
        `aether has no record of ${pod.namespace}/${pod.name} (${containerId} ${ifName})`,
        "the pod was not captured: recreate it",
      );
    }
    return await capturedReply(store, a, timeoutSeconds, fail, ok());
  }
  const netnsPath = env.CNI_NETNS ?? "";
  if (!netnsPath) return fail(CODES.invalidEnvironment, "CNI_NETNS is not set on ADD");
  const a: PodAttachment = {
    namespace: pod.namespace,
    name: pod.name,
    ...(pod.uid ? { uid: pod.uid } : {}),
    containerId,
    ifName,
    netnsPath,
    ips: resultIps(prev),
  };
  try {
    await store.attach(a);
  } catch (e) {
    return fail(CODES.ioFailure, `aether could not record the pod: ${(e as Error).message}`);
  }
  return await capturedReply(store, a, timeoutSeconds, fail, ok(JSON.stringify(prev) + "\n"));
}

/** Waits for `captured` at most `seconds`: `done` when it resolves, error 11 otherwise. */
async function capturedReply(
  store: Attachments,
  a: PodAttachment,
  seconds: number,
  fail: (code: number, msg: string, details?: string) => Reply,
  done: Reply,
): Promise<Reply> {
  const abort = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const expired = new Promise<"timeout">((
    r,
  ) => (timer = setTimeout(() => r("timeout"), seconds * 1000)));
  const pod = `${a.namespace}/${a.name}`;
  const retry =
    "the runtime retries the sandbox; if this persists, check the aether node agent's " +
    "log on this node (the pod stays ContainerCreating until its traffic can be captured)";
  try {
    const outcome = await Promise.race([store.captured(a, abort.signal).then(() => "ok"), expired]);
    if (outcome === "ok") return done;
    return fail(CODES.tryAgainLater, `aether did not capture ${pod} within ${seconds} s`, retry);
  } catch (e) {
    return fail(
      CODES.tryAgainLater,
      `aether could not capture ${pod}: ${(e as Error).message}`,
      retry,
    );
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

/** GC: `cni.dev/valid-attachments` lists what stays. */
async function gc(
  conf: Record<string, unknown>,
  store: Attachments,
  fail: (code: number, msg: string) => Reply,
): Promise<Reply> {
  const valid = conf["cni.dev/valid-attachments"];
  if (!Array.isArray(valid)) return fail(CODES.invalidConfig, "GC needs cni.dev/valid-attachments");
  const keep = valid.flatMap((v) =>
    isObject(v) && typeof v.containerID === "string" && typeof v.ifname === "string"
      ? [{ containerId: v.containerID, ifName: v.ifname }]
      : []
  );
  await store.retain(keep);
  return ok();
}
