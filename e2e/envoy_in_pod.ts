/**
 * The real Envoy run inside a pod's network namespace, for the agent runtimes the tests start on
 * the host (an east-west gateway "pod"): a wrapper script the runtime takes as its Envoy binary.
 * @module
 */
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import type { NetPod } from "./netns.ts";

/**
 * The Envoy of a pod: a wrapper that runs the real Envoy in `pod`'s netns, its admin on the
 * pod's address (the agent's start-up check reaches it there; the bootstrap says 127.0.0.1).
 */
export async function envoyInPod(dir: string, pod: NetPod): Promise<string> {
  const path = join(dir, `envoy-in-${pod.netns}.sh`);
  const envoy = await ensurePeer("envoy"), ip = await ensurePeer("ip");
  await Deno.writeTextFile(
    path,
    `#!/bin/sh
# $1 = -c, $2 = the bootstrap the agent wrote
b="$2.pod"
sed 's/"127\\.0\\.0\\.1"/"${pod.ip}"/g' "$2" > "$b"
shift 2
exec '${ip}' netns exec '${pod.netns}' '${envoy}' -c "$b" "$@"
`,
    { mode: 0o755 },
  );
  return path;
}
