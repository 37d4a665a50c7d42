/**
 * Builds aether's CNI plugin binary, the static forwarder cni/forwarder.c, with the machine's gcc
 * (`gcc -static -Os -s`: no libc needed on the node). The image builder
 * (testbed/cluster/aether_image.ts) and the plugin's tests build it with this; the Dockerfile's
 * `cni` stage runs the same command (cni/forwarder_test.ts checks it does).
 * @module
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The forwarder's source. */
export const FORWARDER_SOURCE: string = join(
  dirname(fileURLToPath(import.meta.url)),
  "..",
  "cni",
  "forwarder.c",
);

/** gcc's flags for the forwarder (the Dockerfile uses the same). */
export const FORWARDER_CFLAGS: readonly string[] = [
  "-static",
  "-Os",
  "-s",
  "-std=gnu11",
  "-Wall",
  "-Wextra",
  "-Werror",
];

/** Compiles the forwarder to `out` (mode 0755); returns `out`. */
export async function buildCniForwarder(out: string): Promise<string> {
  const gcc = new Deno.Command("gcc", {
    args: [...FORWARDER_CFLAGS, "-o", out, FORWARDER_SOURCE],
    stdout: "piped",
    stderr: "piped",
  });
  let result: Deno.CommandOutput;
  try {
    result = await gcc.output();
  } catch (e) {
    throw new Error(
      `gcc is needed to build the CNI forwarder (apt-get install gcc libc6-dev): ${e}`,
    );
  }
  if (!result.success) {
    throw new Error(`gcc ${FORWARDER_SOURCE}: ${new TextDecoder().decode(result.stderr)}`);
  }
  await Deno.chmod(out, 0o755);
  return out;
}
