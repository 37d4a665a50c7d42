/**
 * The node's network: a netns joined to the root netns by a veth (the kernel here has no `dummy`
 * driver), routes from the host to the pod CIDR and the LoadBalancer range, forwarding enabled
 * inside the netns only.
 * @module
 */
import { ensurePeer } from "../peers/mod.ts";
import { run } from "../peers/mod.ts";
import type { Layout } from "./layout.ts";

/** The `ip` invocations that build the network (pure). */
export function netUpCommands(l: Layout): string[][] {
  const n = ["-n", l.netns];
  return [
    ["netns", "add", l.netns],
    ["link", "add", l.hostIf, "type", "veth", "peer", "name", l.nodeIf],
    ["link", "set", l.nodeIf, "netns", l.netns],
    ["addr", "add", `${l.hostIp}/30`, "dev", l.hostIf],
    ["link", "set", l.hostIf, "up"],
    [...n, "addr", "add", `${l.nodeIp}/30`, "dev", l.nodeIf],
    [...n, "link", "set", l.nodeIf, "up"],
    [...n, "link", "set", "lo", "up"],
    [...n, "route", "add", "default", "via", l.hostIp],
    ["route", "add", l.podCidr, "via", l.nodeIp, "dev", l.hostIf],
    ["route", "add", l.lbCidr, "via", l.nodeIp, "dev", l.hostIf],
  ];
}

/** Whether the node netns exists. */
export async function netnsExists(l: Layout): Promise<boolean> {
  const out = await run(await ensurePeer("ip"), ["netns", "list"]);
  return out.split("\n").some((line) => line.split(" ")[0] === l.netns);
}

/** Creates the netns, veth and routes and enables forwarding inside the netns. */
export async function netUp(l: Layout): Promise<void> {
  const ip = await ensurePeer("ip");
  for (const args of netUpCommands(l)) await run(ip, args);
  await run(ip, ["netns", "exec", l.netns, "sysctl", "-qw", "net.ipv4.ip_forward=1"]);
}

/**
 * Removes the routes, the veth and the netns (the bridge and the pods' veths go with the netns);
 * each step tolerates an already-missing object.
 */
export async function netDown(l: Layout): Promise<void> {
  const ip = await ensurePeer("ip");
  const quiet = (args: string[]) => run(ip, args).catch(() => "");
  await quiet(["route", "del", l.lbCidr]);
  await quiet(["route", "del", l.podCidr]);
  await quiet(["link", "del", l.hostIf]);
  await quiet(["netns", "del", l.netns]);
}

/** Names of links in the root netns that belong to the cluster (for `status` and tests). */
export async function leftoverLinks(l: Layout): Promise<string[]> {
  const out = await run(await ensurePeer("ip"), ["-o", "link", "show"]);
  return out.split("\n").map((line) => line.split(":")[1]?.trim().split("@")[0] ?? "")
    .filter((name) => name === l.hostIf || name === l.nodeIf || name === l.bridge);
}
