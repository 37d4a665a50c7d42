/**
 * Test support for capture against the real thing: throwaway network namespaces (`ip netns
 * add`, loopback up, test addresses on `lo`), the `nft` CLI run inside one (to read tables back
 * and to tamper with them by hand, independently of the FFI applier), and the traffic probe
 * (testdata/probe.ts) run inside one. Needs root and the peers `ip` and `nft`.
 * @module
 */
import { fileURLToPath } from "node:url";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { type ListedTable, parseTable } from "../../lib/nft/mod.ts";

/** A command's exit status and output. */
export interface Ran {
  ok: boolean;
  out: string;
  err: string;
}

async function run(cmd: string, args: string[], stdin?: string): Promise<Ran> {
  const child = new Deno.Command(cmd, {
    args,
    stdin: stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin !== undefined) {
    const w = child.stdin.getWriter();
    await w.write(new TextEncoder().encode(stdin));
    await w.close();
  }
  const o = await child.output();
  const dec = new TextDecoder();
  return { ok: o.success, out: dec.decode(o.stdout), err: dec.decode(o.stderr) };
}

/** One listener or connection of the probe. */
export interface ProbeListen {
  proto: "tcp" | "udp";
  host: string;
  port: number;
  name: string;
}

/** A throwaway netns. */
export interface TestNetns {
  name: string;
  /** `/var/run/netns/<name>`. */
  path: string;
  /** `nft args…` inside it (the CLI, not the applier); throws on failure. */
  nft(args: string[], stdin?: string): Promise<string>;
  /** The table as the CLI lists it, read back; undefined when there is none. */
  listed(): Promise<ListedTable | undefined>;
  /** Which listener answered each connection (`"<proto> <host>:<port>"` → name or error). */
  probe(
    listen: ProbeListen[],
    connect: Omit<ProbeListen, "name">[],
  ): Promise<Record<string, string>>;
  /** Deletes the netns and makes a new one at the same path (lo up, no address). */
  recreate(): Promise<void>;
  /** Deletes the netns (idempotent). */
  remove(): Promise<void>;
}

/** Creates `aether-cap-<random>` with lo up and `addresses` (CIDRs) on lo. */
export async function createNetns(addresses: string[] = []): Promise<TestNetns> {
  const ip = await ensurePeer("ip");
  const nftBin = await ensurePeer("nft");
  const name = `aether-cap-${crypto.randomUUID().slice(0, 8)}`;
  const must = async (args: string[]) => {
    const r = await run(ip, args);
    if (!r.ok) throw new Error(`ip ${args.join(" ")}: ${r.err}`);
  };
  const remove = async () => {
    await run(ip, ["netns", "del", name]);
  };
  try {
    await must(["netns", "add", name]);
    await must(["-n", name, "link", "set", "lo", "up"]);
    for (const a of addresses) {
      await must([
        "-n",
        name,
        "addr",
        "add",
        a,
        "dev",
        "lo",
        ...(a.includes(":") ? ["nodad"] : []),
      ]);
    }
  } catch (e) {
    await remove();
    throw e;
  }
  const nft = async (args: string[], stdin?: string) => {
    const r = await run(ip, ["netns", "exec", name, nftBin, ...args], stdin);
    if (!r.ok) throw new Error(`nft ${args.join(" ")} in ${name}: ${r.err}`);
    return r.out;
  };
  const probeScript = fileURLToPath(new URL("./testdata/probe.ts", import.meta.url));
  return {
    name,
    path: `/var/run/netns/${name}`,
    nft,
    async listed() {
      const r = await run(ip, [
        "netns",
        "exec",
        name,
        nftBin,
        "-j",
        "list",
        "table",
        "inet",
        "aether",
      ]);
      if (!r.ok && /No such file or directory/.test(r.err)) return undefined;
      if (!r.ok) throw new Error(`nft -j list table inet aether in ${name}: ${r.err}`);
      return parseTable(r.out);
    },
    async probe(listen, connect) {
      const r = await run(ip, [
        "netns",
        "exec",
        name,
        Deno.execPath(),
        "run",
        "-A",
        "--unstable-net",
        "--no-config",
        probeScript,
        JSON.stringify({ listen, connect }),
      ]);
      if (!r.ok) throw new Error(`probe in ${name}: ${r.err}`);
      return JSON.parse(r.out.trim().split("\n").pop()!);
    },
    async recreate() {
      await remove();
      await must(["netns", "add", name]);
      await must(["-n", name, "link", "set", "lo", "up"]);
    },
    remove,
  };
}
