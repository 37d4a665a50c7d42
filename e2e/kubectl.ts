/**
 * kubectl for the e2e tests on the local cluster, with exec over SPDY (what the conformance
 * suite's remotecommand executor uses) instead of kubectl's default WebSocket.
 * @module
 */
import { ensurePeer } from "../lib/peers/mod.ts";

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
