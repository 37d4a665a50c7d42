/**
 * The plugin as `cni/main.ts` runs it (the `deno compile` build, for hosts where Deno's runtime is
 * at hand): the same forwarding as the static forwarder cni/forwarder.c, in TypeScript. VERSION is
 * answered here, skipped pods pass here, everything else goes to the node agent's socket; when the
 * agent is unreachable or silent past `timeoutSeconds` + 5 s: ADD, CHECK and GC error 11, STATUS
 * error 50, DEL success.
 * @module
 */
import {
  cniVersionOf,
  decodeStdin,
  FORWARDER_MARGIN_SECONDS,
  MAX_CONF_BYTES,
  parseConf,
  skipReason,
  socketPathOf,
  timeoutSecondsOf,
} from "./conf.ts";
import { encodeRequest, readReply } from "./protocol.ts";
import { CNI_ENV, cniError, CODES, ok, type Reply, versionAnswer } from "./spec.ts";

/** What the runtime hands a plugin: its environment and stdin. */
export interface Invocation {
  env: Readonly<Record<string, string | undefined>>;
  stdin: Uint8Array;
}

/** What the agent's reply did not come with: unreachable (and why), or no answer in time. */
type Failure = { unreachable: string } | { silent: true };

/** Sends the invocation to `socket`; the reply, or why there is none, before `deadline`. */
async function ask(socket: string, inv: Invocation, deadline: number): Promise<Reply | Failure> {
  const env: Record<string, string> = {};
  for (const k of CNI_ENV) if (inv.env[k] !== undefined) env[k] = inv.env[k]!;
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path: socket });
  } catch (e) {
    return { unreachable: (e as Error).message };
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<Failure>((r) => {
    timer = setTimeout(() => r({ silent: true }), Math.max(0, deadline - Date.now()));
  });
  try {
    const exchange = (async (): Promise<Reply | Failure> => {
      const frame = encodeRequest({ env, stdin: inv.stdin });
      for (let at = 0; at < frame.length;) at += await conn.write(frame.subarray(at));
      return await readReply(conn);
    })().catch((e): Failure => ({
      unreachable: `the agent closed the connection without a whole answer (${
        (e as Error).message
      })`,
    }));
    return await Promise.race([exchange, silent]);
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed */ }
  }
}

const RETRY = "the pod's traffic cannot be captured yet, so its sandbox does not start; the " +
  "runtime retries it. Check the aether agent pod on this node (DaemonSet aether-agent) and its log";

/** Runs one plugin invocation (never throws). */
export async function runPlugin(inv: Invocation): Promise<Reply> {
  const cmd = inv.env.CNI_COMMAND;
  const tooBig = inv.stdin.length > MAX_CONF_BYTES;
  const conf = tooBig ? undefined : parseConf(decodeStdin(inv.stdin));
  const version = cniVersionOf(conf);
  if (!cmd) return cniError(version, CODES.invalidEnvironment, "CNI_COMMAND is not set");
  if (cmd === "VERSION") {
    const asked = conf && typeof conf === "object"
      ? (conf as { cniVersion?: unknown }).cniVersion
      : "";
    return ok(versionAnswer(typeof asked === "string" ? asked : ""));
  }
  if (tooBig) {
    return cniError(version, CODES.invalidConfig, "the network configuration is larger than 1 MiB");
  }
  if (skipReason(inv.env, conf)) {
    const prev = (conf as { prevResult?: unknown }).prevResult;
    if (typeof prev !== "object" || prev === null || Array.isArray(prev)) {
      return cniError(
        version,
        CODES.invalidConfig,
        `aether-cni is a chained plugin and got no prevResult on ${cmd}`,
        "list it after the pod network's own plugins in the conflist",
      );
    }
    return cmd === "ADD" ? ok(JSON.stringify(prev) + "\n") : ok();
  }
  const socket = socketPathOf(conf);
  const bound = timeoutSecondsOf(conf) + FORWARDER_MARGIN_SECONDS;
  const got = await ask(socket, inv, Date.now() + bound * 1000);
  if ("exitCode" in got) return got;
  const msg = "silent" in got
    ? `the aether node agent at ${socket} did not answer within ${bound} s`
    : `the aether node agent is unreachable at ${socket}: ${got.unreachable}`;
  if (cmd === "DEL") {
    return { ...ok(), stderr: `aether-cni: DEL not forwarded (${msg}); nothing to undo here\n` };
  }
  return cniError(version, cmd === "STATUS" ? CODES.notAvailable : CODES.tryAgainLater, msg, RETRY);
}
