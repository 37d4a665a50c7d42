/**
 * aether's CNI binary (`deno compile` entry; the image ships the static forwarder
 * cni/forwarder.c for hosts without Deno's runtime, which does the same).
 * - Exec'd by a container runtime (`CNI_COMMAND` set): the chained plugin, forwarding to the node
 *   agent (cni/forward.ts).
 * - `cni/main.ts install …`: installs the plugin binary and its conflist entry on the node and
 *   keeps them there; `cni/main.ts uninstall …` removes them (cni/install_cli.ts).
 * @module
 */

/** Reads stdin up to `max` + 1 bytes (more is refused as too large, without reading it all). */
async function readStdin(max: number): Promise<Uint8Array> {
  const out = new Uint8Array(max + 1);
  let n = 0;
  while (n < out.length) {
    const got = await Deno.stdin.read(out.subarray(n));
    if (got === null) break;
    n += got;
  }
  return out.subarray(0, n);
}

async function writeAll(w: { write(p: Uint8Array): Promise<number> }, text: string) {
  const bytes = new TextEncoder().encode(text);
  for (let at = 0; at < bytes.length;) at += await w.write(bytes.subarray(at));
}

async function main(args: string[]): Promise<number> {
  if (args[0] === "install" || args[0] === "uninstall") {
    return await (await import("./install_cli.ts")).installCommand(args);
  }
  const [{ runPlugin }, { MAX_CONF_BYTES }] = await Promise.all([
    import("./forward.ts"),
    import("./conf.ts"),
  ]);
  const reply = await runPlugin({
    env: Deno.env.toObject(),
    stdin: await readStdin(MAX_CONF_BYTES),
  });
  await writeAll(Deno.stdout, reply.stdout);
  await writeAll(Deno.stderr, reply.stderr);
  return reply.exitCode;
}

if (import.meta.main) Deno.exit(await main(Deno.args));
