/**
 * Pods for mesh tests: real Linux network namespaces (`ip netns`), each with loopback up, and a
 * way to run a command inside one. The node proxy's per-pod listeners bind inside them.
 * @module
 */
import { ensurePeer } from "../testbed/peers/mod.ts";

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

/** A pod with a routable address on a test bridge (see {@link createPodNetwork}). */
export interface NetPod extends TestPod {
  /** The pod's address on the bridge (eth0). */
  ip: string;
}

/** A bridge network for test pods, made by the real CNI plugins (bridge + host-local). */
export interface PodNetwork {
  /** Bridge name (random). */
  bridge: string;
  /** The /24 subnet (random, unused on this host when made). */
  subnet: string;
  /** The bridge's (host side, gateway) address. */
  gateway: string;
  /** A new pod: netns + veth on the bridge, address from host-local. */
  addPod(prefix?: string): Promise<NetPod>;
  /** CNI DEL of every pod, netns and bridge removed, IPAM state removed. */
  remove(): Promise<void>;
}

async function cni(
  plugin: string,
  command: "ADD" | "DEL",
  netns: string,
  conf: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  const child = new Deno.Command(plugin, {
    env: {
      CNI_COMMAND: command,
      CNI_CONTAINERID: netns,
      CNI_NETNS: `/var/run/netns/${netns}`,
      CNI_IFNAME: "eth0",
      CNI_PATH: plugin.slice(0, plugin.lastIndexOf("/")),
    },
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const w = child.stdin.getWriter();
  await w.write(new TextEncoder().encode(JSON.stringify(conf)));
  await w.close();
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout);
  if (!out.success) {
    throw new Error(`CNI ${command} ${netns}: ${text}${new TextDecoder().decode(out.stderr)}`);
  }
  return text.trim() ? JSON.parse(text) : {};
}

/**
 * A bridge network for pods (DESIGN "pods without a cluster"): a random bridge name and a random
 * 10.x.y.0/24 not routed on this host, so parallel tests do not collide. The host reaches every
 * pod through the bridge (its gateway address), which is how a node proxy in the host namespace
 * dials pod addresses.
 */
export async function createPodNetwork(): Promise<PodNetwork> {
  const ip = await ensurePeer("ip");
  const bridgePlugin = await ensurePeer("cni-plugins");
  const routes = await run(ip, ["-4", "route", "show", "table", "all"]);
  let subnet = "";
  for (let i = 0; i < 50 && !subnet; i++) {
    const [a, b] = crypto.getRandomValues(new Uint8Array(2));
    const candidate = `10.${100 + (a % 100)}.${b}`;
    if (!routes.includes(`${candidate}.`)) subnet = candidate;
  }
  if (!subnet) throw new Error("no free 10.x.y.0/24 for a test pod network");
  const id = crypto.randomUUID().slice(0, 8);
  const bridge = `aeth${id.slice(0, 6)}`;
  const dataDir = await Deno.makeTempDir({ prefix: "aether-cni-" });
  const conf = {
    cniVersion: "1.0.0",
    name: `aether-test-${id}`,
    type: "bridge",
    bridge,
    isGateway: true,
    ipMasq: false,
    hairpinMode: true,
    ipam: {
      type: "host-local",
      subnet: `${subnet}.0/24`,
      dataDir,
      routes: [{ dst: "0.0.0.0/0" }],
    },
  };
  const pods: TestPod[] = [];
  return {
    bridge,
    subnet: `${subnet}.0/24`,
    gateway: `${subnet}.1`,
    addPod: async (prefix = "aether-pod") => {
      const pod = await createPod(prefix);
      pods.push(pod);
      const result = await cni(bridgePlugin, "ADD", pod.netns, conf);
      const address = (result.ips as { address: string }[] | undefined)?.[0]?.address;
      if (!address) throw new Error(`CNI ADD gave no address: ${JSON.stringify(result)}`);
      return {
        ...pod,
        ip: address.split("/")[0],
        remove: async () => {
          await cni(bridgePlugin, "DEL", pod.netns, conf).catch(() => {});
          await pod.remove();
        },
      };
    },
    remove: async () => {
      for (const p of pods) {
        await cni(bridgePlugin, "DEL", p.netns, conf).catch(() => {});
        await p.remove();
      }
      await run(ip, ["link", "delete", bridge]).catch(() => {});
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}
