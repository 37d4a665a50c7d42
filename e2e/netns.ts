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
  /** The bridge plugin's ADD result (a chained plugin's `prevResult`). */
  result: Record<string, unknown>;
}

/** A bridge network for test pods, made by the real CNI plugins (bridge + host-local). */
export interface PodNetwork {
  /** Bridge name (random). */
  bridge: string;
  /** The /24 subnet (random, unused on this host when made). */
  subnet: string;
  /** The bridge's (host side, gateway) address. */
  gateway: string;
  /**
   * The upper half of the subnet (`x.y.z.128/25`), which host-local never hands out (it gives
   * `.2`–`.127`): addresses chosen elsewhere, e.g. a kwok node's `spec.podCIDR`, go there.
   */
  staticRange: string;
  /**
   * A new pod: netns + veth on the bridge, address from host-local, or exactly `ip` (static IPAM:
   * an address someone else chose, e.g. the API server's pod IP; it must be in the subnet and not
   * the gateway; see {@link PodNetwork.staticRange}).
   */
  addPod(prefix?: string, opts?: { ip?: string }): Promise<NetPod>;
  /**
   * Makes the bridge with its gateway address now (the bridge plugin makes it with the first
   * pod otherwise), e.g. for a node agent to bind the gateway address before any pod exists.
   */
  up(): Promise<void>;
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
 * 10.x.y.0/24 not routed on this host, so parallel tests do not collide — or the `bridge` and
 * `subnet` (`a.b.c.0/24`) given (a long-lived cluster's). The host reaches every pod through the
 * bridge (its gateway address), which is how a node proxy in the host namespace dials pod
 * addresses.
 */
export async function createPodNetwork(
  opts: { bridge?: string; subnet?: string } = {},
): Promise<PodNetwork> {
  const ip = await ensurePeer("ip");
  const bridgePlugin = await ensurePeer("cni-plugins");
  const routes = await run(ip, ["-4", "route", "show", "table", "all"]);
  let subnet = "";
  if (opts.subnet !== undefined) {
    const m = /^(\d+\.\d+\.\d+)\.0\/24$/.exec(opts.subnet);
    if (!m) throw new Error(`pod network subnet must be a.b.c.0/24, got ${opts.subnet}`);
    subnet = m[1];
  }
  for (let i = 0; i < 50 && !subnet; i++) {
    const [a, b] = crypto.getRandomValues(new Uint8Array(2));
    const candidate = `10.${100 + (a % 100)}.${b}`;
    if (!routes.includes(`${candidate}.`)) subnet = candidate;
  }
  if (!subnet) throw new Error("no free 10.x.y.0/24 for a test pod network");
  const id = crypto.randomUUID().slice(0, 8);
  const bridge = opts.bridge ?? `aeth${id.slice(0, 6)}`;
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
      rangeEnd: `${subnet}.127`,
      dataDir,
      routes: [{ dst: "0.0.0.0/0" }],
    },
  };
  const confOf = (ip?: string) =>
    ip === undefined ? conf : {
      ...conf,
      ipam: { type: "static", addresses: [{ address: `${ip}/24` }], routes: conf.ipam.routes },
    };
  const pods: { pod: TestPod; conf: Record<string, unknown> }[] = [];
  return {
    bridge,
    subnet: `${subnet}.0/24`,
    gateway: `${subnet}.1`,
    staticRange: `${subnet}.128/25`,
    addPod: async (prefix = "aether-pod", opts = {}) => {
      if (opts.ip !== undefined && !opts.ip.startsWith(`${subnet}.`)) {
        throw new Error(`pod address ${opts.ip} is not in the bridge's ${subnet}.0/24`);
      }
      const pod = await createPod(prefix);
      const podConf = confOf(opts.ip);
      const entry = { pod, conf: podConf };
      pods.push(entry);
      let result: Record<string, unknown>;
      try {
        result = await cni(bridgePlugin, "ADD", pod.netns, podConf);
      } catch (e) {
        await pod.remove();
        pods.splice(pods.indexOf(entry), 1);
        throw e;
      }
      const address = (result.ips as { address: string }[] | undefined)?.[0]?.address;
      if (!address) throw new Error(`CNI ADD gave no address: ${JSON.stringify(result)}`);
      return {
        ...pod,
        ip: address.split("/")[0],
        result,
        remove: async () => {
          const at = pods.indexOf(entry);
          if (at >= 0) pods.splice(at, 1);
          await cni(bridgePlugin, "DEL", pod.netns, podConf).catch(() => {});
          await pod.remove();
        },
      };
    },
    up: async () => {
      await run(ip, ["link", "add", bridge, "type", "bridge"]);
      await run(ip, ["addr", "add", `${subnet}.1/24`, "dev", bridge]);
      await run(ip, ["link", "set", bridge, "up"]);
    },
    remove: async () => {
      for (const { pod: p, conf: c } of pods.splice(0)) {
        await cni(bridgePlugin, "DEL", p.netns, c).catch(() => {});
        await p.remove();
      }
      await run(ip, ["link", "delete", bridge]).catch(() => {});
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    },
  };
}
