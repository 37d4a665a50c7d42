/**
 * A cluster's east-west gateway as a pod of that cluster: `agent east-west-gateway`'s runtime with
 * its own real Envoy running in its own network namespace on the cluster's bridge, listening on
 * the namespace's address (the one address other clusters are given in east-west mode).
 * @module
 */
import { join } from "node:path";
import { Logger } from "../lib/log/mod.ts";
import type { RegistryKv } from "../lib/registry/mod.ts";
import { type EastWestGateway, runEastWestGateway } from "../agent/east_west/mod.ts";
import { nodeDefaults } from "../agent/node/mod.ts";
import type { NetPod, PodNetwork } from "./netns.ts";
import { GATEWAY_PORT, nft } from "./mcs_east_west_scene.ts";
import { envoyInPod } from "./envoy_in_pod.ts";

/** A gateway pod: its netns, `ip:port`, and the running gateway once started. */
export interface GatewayPod {
  pod: NetPod;
  address: string;
  /** Starts the gateway (after the cluster's controller, which publishes `address`). */
  start(kv: RegistryKv, region: string, cluster: string, logs: string[]): Promise<EastWestGateway>;
}

/** A netns on `net` for a gateway (its address known before the controller starts). */
export async function gatewayPod(net: PodNetwork, dir: string): Promise<GatewayPod> {
  const pod = await net.addPod("aether-ewgw");
  return {
    pod,
    address: `${pod.ip}:${GATEWAY_PORT}`,
    start: async (kv, region, cluster, logs) => {
      const gw = await runEastWestGateway({
        kv,
        origin: { region, cluster },
        listen: `${pod.ip}:${GATEWAY_PORT}`,
        meshDomain: nodeDefaults.meshDomain,
        adminAddress: "127.0.0.1:0",
        xdsAddress: `${net.gateway}:0`,
        nodeId: `east-west-${cluster}`,
        envoy: await envoyInPod(dir, pod),
        stateDir: join(dir, `east-west-${cluster}`),
        logger: new Logger(`${cluster}/east-west`, (l) => logs.push(l), "info"),
      });
      try {
        await gw.waitReady(120_000);
      } catch (e) {
        await gw.close();
        throw e;
      }
      return gw;
    },
  };
}

/**
 * Only `gateway` of `subnet` is routed from `from` (another cluster's pod subnet): new connections
 * to any other address of `subnet` are dropped in the host's forward hook; from the host itself
 * (where both clusters' node proxies run, and a node proxy dials its own pods' apps) only those to
 * the mesh port 15008. An nftables table of its own, named `table`; returns its removal.
 */
export async function onlyGatewayRouted(
  table: string,
  subnet: string,
  gateway: string,
  from: string,
): Promise<() => Promise<void>> {
  await nft(
    ["-f", "-"],
    `table ip ${table} {
  chain egress {
    type filter hook output priority 0; policy accept;
    ip daddr ${subnet} ip daddr != ${gateway} tcp dport 15008 ct state new counter drop
  }
  chain forward {
    type filter hook forward priority 0; policy accept;
    ip saddr ${from} ip daddr ${subnet} ip daddr != ${gateway} ct state new counter drop
  }
}
`,
  );
  return async () => {
    await nft(["delete", "table", "ip", table]).catch(() => "");
  };
}
