/**
 * Test helpers for the DNS responder inside a network namespace of the test's own: a fresh
 * namespace (loopback up) with its own resolv.conf (`ip netns exec` bind-mounts
 * /etc/netns/<name>/resolv.conf over /etc/resolv.conf), processes run inside it, and the
 * responder (tools/dns_responder.ts) started there. Nothing leaves the namespace; remove() stops what it
 * started and deletes the namespace and its /etc/netns folder. Not part of the agent.
 * @module
 */
import { fileURLToPath } from "node:url";
import { ensurePeer } from "../../testbed/peers/mod.ts";

/** How long the responder may take to say it listens (deno compiles it first). */
const BANNER_TIMEOUT_MS = 120_000;

/** A command's exit status and its stdout followed by its stderr. */
export interface CommandResult {
  ok: boolean;
  out: string;
}

/** Runs `cmd args` to the end; a failure exit is a result, not an exception. */
export async function run(cmd: string, args: string[]): Promise<CommandResult> {
  const o = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const dec = new TextDecoder();
  return { ok: o.success, out: dec.decode(o.stdout) + dec.decode(o.stderr) };
}

/** A network namespace for one DNS test. */
export interface DnsNetns {
  /** The `ip netns` name (random). */
  name: string;
  /** Runs `ip args` on the host (e.g. to move a veth end into the namespace). */
  ip(args: string[]): Promise<CommandResult>;
  /** Runs `cmd args` inside the namespace to the end. */
  exec(cmd: string, args: string[]): Promise<CommandResult>;
  /** Starts a long-running `cmd args` inside the namespace; remove() stops it. */
  spawn(cmd: string, args: string[]): Deno.ChildProcess;
  /** Starts the responder CLI with `args` inside the namespace; resolves with its banner line(s). */
  startResponder(args: string[]): Promise<string>;
  /** Stops every process started inside, deletes the namespace and its /etc/netns folder. */
  remove(): Promise<void>;
}

/** Creates `<prefix>-<random>` with loopback up and `resolvConf` as its resolv.conf. */
export async function createDnsNetns(prefix: string, resolvConf: string): Promise<DnsNetns> {
  const ipBin = await ensurePeer("ip");
  const name = `${prefix}-${crypto.randomUUID().slice(0, 8)}`;
  const etc = `/etc/netns/${name}`;
  const children: { child: Deno.ChildProcess; piped: boolean }[] = [];
  const ip = (args: string[]) => run(ipBin, args);
  const remove = async () => {
    for (const { child, piped } of children) {
      try {
        child.kill("SIGTERM");
      } catch { /* exited */ }
      await child.status;
      if (piped) await child.stdout.cancel().catch(() => {});
    }
    await ip(["netns", "del", name]);
    await Deno.remove(etc, { recursive: true }).catch(() => {});
  };
  const spawn = (cmd: string, args: string[], stdout: "null" | "piped" = "null") => {
    const child = new Deno.Command(ipBin, {
      args: ["netns", "exec", name, cmd, ...args],
      stdout,
      stderr: "inherit",
      env: { AETHER_LOG_LEVEL: "warn" },
    }).spawn();
    children.push({ child, piped: stdout === "piped" });
    return child;
  };
  try {
    const add = await ip(["netns", "add", name]);
    if (!add.ok) throw new Error(`ip netns add ${name}: ${add.out}`);
    const lo = await ip(["-n", name, "link", "set", "lo", "up"]);
    if (!lo.ok) throw new Error(`ip -n ${name} link set lo up: ${lo.out}`);
    await Deno.mkdir(etc, { recursive: true });
    await Deno.writeTextFile(`${etc}/resolv.conf`, resolvConf);
  } catch (e) {
    await remove();
    throw e;
  }
  return {
    name,
    ip,
    exec: (cmd, args) => ip(["netns", "exec", name, cmd, ...args]),
    spawn: (cmd, args) => spawn(cmd, args),
    async startResponder(args) {
      const cli = fileURLToPath(new URL("../../tools/dns_responder.ts", import.meta.url));
      const child = spawn(Deno.execPath(), ["run", "-A", cli, ...args], "piped");
      const reader = child.stdout.getReader();
      // A generous bound for a loaded machine; cancelling ends the pending read.
      const timer = setTimeout(() => reader.cancel().catch(() => {}), BANNER_TIMEOUT_MS);
      let banner = "";
      try {
        while (!banner.includes("listening")) {
          const { value, done } = await reader.read();
          if (done) break;
          banner += new TextDecoder().decode(value);
        }
      } finally {
        clearTimeout(timer);
        reader.releaseLock();
      }
      return banner;
    },
    remove,
  };
}
