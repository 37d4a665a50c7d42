/**
 * Pods for mesh tests: real Linux network namespaces (`ip netns`), each with loopback up, and a
 * way to run a command inside one. The node proxy's per-pod listeners bind inside them.
 * @module
 */
import { ensurePeer } from "../lib/peers/mod.ts";

/** A network namespace standing in for a pod. */
export interface TestPod {
  /** `ip netns` name. */
  netns: string;
  /** Path Envoy binds listeners in (`/var/run/netns/<name>`). */
  netnsPath: string;
  /** Runs a command inside the namespace and returns its stdout (throws on failure). */
  exec(cmd: string, args: string[]): Promise<string>;
  remove(): Promise<void>;
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  if (!out.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr).trim()}`);
  }
  return new TextDecoder().decode(out.stdout);
}

/** Creates a fresh network namespace with loopback up. */
export async function createPod(prefix = "aether-pod"): Promise<TestPod> {
  const ip = await ensurePeer("ip");
  const netns = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  await run(ip, ["netns", "add", netns]);
  await run(ip, ["-n", netns, "link", "set", "lo", "up"]);
  return {
    netns,
    netnsPath: `/var/run/netns/${netns}`,
    exec: (cmd, args) => run(ip, ["netns", "exec", netns, cmd, ...args]),
    remove: async () => {
      await run(ip, ["netns", "delete", netns]).catch(() => {});
    },
  };
}
