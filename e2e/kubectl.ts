/**
 * kubectl for the e2e tests on the local cluster, with exec over SPDY (what the conformance
 * suite's remotecommand executor uses) instead of kubectl's default WebSocket.
 * @module
 */
import { ensurePeer } from "../testbed/peers/mod.ts";

/** Runs kubectl with `kubeconfig`; returns stdout, throws with stderr when it fails. */
export async function kubectl(
  kubeconfig: string,
  args: string[],
  stdin?: string,
): Promise<string> {
  const child = new Deno.Command(await ensurePeer("kubectl"), {
    args: [`--kubeconfig=${kubeconfig}`, ...args],
    // SPDY for exec, as the conformance suite's remotecommand executor uses.
    env: { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: "false" },
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`kubectl ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  }
  return text;
}

/**
 * Deletes the objects of `manifest` that exist and (with `wait`) waits until they are gone. A kind
 * whose CRD is not installed — a fresh cluster before the chart brought the Gateway API CRDs — has
 * no objects to delete, so kubectl's "no matches for kind" for it is not an error (its
 * `--ignore-not-found` covers missing objects only); any other failure is.
 */
export async function deleteIfPresent(
  kubeconfig: string,
  manifest: string,
  wait = true,
): Promise<void> {
  try {
    await kubectl(
      kubeconfig,
      ["delete", "--ignore-not-found", `--wait=${wait}`, "-f", "-"],
      manifest,
    );
  } catch (e) {
    const lines = String((e as Error).message).split("\n").slice(1).filter((l) => l.trim() !== "");
    const unknownKind = (l: string) =>
      /^resource mapping not found for name: .*no matches for kind/.test(l) ||
      l.trim() === "ensure CRDs are installed first";
    if (lines.length === 0 || !lines.every(unknownKind)) throw e;
  }
}

/**
 * `kubectl rollout status` of `resource` ("daemonset/aether-agent") in `namespace`; when it times
 * out, the error carries what explains it (see {@link waitExplained}).
 */
export function rollout(
  kubeconfig: string,
  namespace: string,
  resource: string,
  opts: { timeoutSeconds?: number; more?: () => Promise<string> } = {},
): Promise<void> {
  const timeout = `--timeout=${opts.timeoutSeconds ?? 300}s`;
  return waitExplained(kubeconfig, namespace, ["rollout", "status", resource, timeout], opts.more);
}

/**
 * Runs a waiting kubectl command (`rollout status`, `wait --for=…`) in `namespace`; when it fails,
 * the error carries what explains it: the namespace's pods, its newest events, the last log lines
 * (and the previous container's, after a restart) of every pod that is not Ready, and whatever
 * `more` adds (e.g. the agent's own `/readyz` and `/debug/xds`).
 */
export async function waitExplained(
  kubeconfig: string,
  namespace: string,
  args: string[],
  more?: () => Promise<string>,
): Promise<void> {
  const k = (a: string[]) => kubectl(kubeconfig, ["-n", namespace, ...a]);
  try {
    await k(args);
  } catch (e) {
    const extra = await more?.().catch((e) => `(${(e as Error).message})`);
    throw new Error(`${(e as Error).message}\n${await explain(k)}${extra ? `\n${extra}` : ""}`);
  }
}

async function explain(k: (args: string[]) => Promise<string>): Promise<string> {
  const part = async (title: string, args: string[]) => {
    const text = await k(args).catch((e) => `(${(e as Error).message.trim()})`);
    return `--- ${title}\n${text.trim()}`;
  };
  const parts = [
    await part("pods", ["get", "pods", "-o", "wide"]),
    await part("events", ["get", "events", "--sort-by=.lastTimestamp"]),
  ];
  const pods = JSON.parse(await k(["get", "pods", "-o", "json"]).catch(() => '{"items":[]}'));
  for (const pod of pods.items ?? []) {
    // deno-lint-ignore no-explicit-any
    const ready = pod.status?.conditions?.find((c: any) => c.type === "Ready")?.status === "True";
    if (ready) continue;
    const name = pod.metadata.name;
    parts.push(await part(`${name} log`, ["logs", name, "--all-containers", "--tail=40"]));
    parts.push(
      await part(`${name} previous log`, [
        "logs",
        name,
        "--all-containers",
        "--previous",
        "--tail=40",
      ]),
    );
  }
  return parts.join("\n").split("\n").slice(-400).join("\n");
}
