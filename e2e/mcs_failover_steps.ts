/**
 * What the MCS failover tests share (flat mode, e2e/mcs_failover_test.ts, and through an east-west
 * gateway, e2e/mcs_east_west_failover_test.ts): A's proxy's endpoints for web's clusterset VIP
 * with their successful requests, a paced load client in A's caller pod, and waits on both.
 * @module
 */
import { ensurePeer } from "../testbed/peers/mod.ts";
import { vipServiceName } from "../lib/mcs/mod.ts";
import { waitFor } from "./peers/proc.ts";
import type { McsCluster } from "./mcs_clusters.ts";
import { CLUSTERSET_NAME, IMPORT_VIP, NS, WEB_PORT } from "./mcs_scene.ts";
import type { LoadResult } from "./identity_harness.ts";

/**
 * The endpoints of A's caller's cluster for web's clusterset VIP Service in A's Envoy: address
 * (pod IP, or the gateway's for B) → requests that succeeded there.
 */
export async function proxyEndpoints(a: McsCluster): Promise<Map<string, number>> {
  const prefix = `${vipServiceName(NS, "web")}.aether.internal|${NS}/caller::`;
  const out = new Map<string, number>();
  for (const line of (await a.node.envoy!.admin("/clusters")).split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const [, host, stat, value] = line.split("::");
    // Host lines only (not added_via_api::true, default_priority::max_connections::…).
    if (!/^(\d|envoy:\/\/)/.test(host)) continue;
    // This node's pods are dialled through internal listeners: envoy://inbound-internal|<ip>|<sni>/
    const ip = host.startsWith("envoy://") ? host.split("|")[1] : host.split(":")[0];
    if (stat === "rq_success") out.set(ip, Number(value));
    else if (!out.has(ip)) out.set(ip, 0);
  }
  return out;
}

/** A load client in A's caller pod against the VIP, until `stop` is called. */
export async function startLoad(a: McsCluster, dir: string) {
  const stopFile = `${dir}/stop-${crypto.randomUUID().slice(0, 6)}`;
  const child = new Deno.Command(await ensurePeer("ip"), {
    args: ["netns", "exec", a.pods.caller.pod.netns, Deno.execPath(), "run", "-A"]
      .concat(["e2e/load_client.ts", "--host", `${CLUSTERSET_NAME}:${WEB_PORT}`])
      .concat(["--address", IMPORT_VIP, "--port", String(WEB_PORT), "--rate", "50"])
      .concat(["--workers", "4", "--seconds", "600", "--stop-file", stopFile]),
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const output = child.output();
  return {
    stop: async (): Promise<LoadResult & { lastFailedSentAt: number }> => {
      await Deno.writeTextFile(stopFile, "");
      const out = await output;
      const text = new TextDecoder().decode(out.stdout).trim();
      if (!out.success) throw new Error(`load client: ${new TextDecoder().decode(out.stderr)}`);
      return JSON.parse(text.split("\n").pop()!);
    },
    kill: () => {
      try {
        child.kill("SIGKILL");
      } catch { /* gone */ }
      return output.then(() => {}, () => {});
    },
  };
}

/** Waits until `ip` in A's proxy has served `n` more requests than it had. */
export async function served(a: McsCluster, ip: string, n: number): Promise<void> {
  const base = (await proxyEndpoints(a)).get(ip) ?? 0;
  await waitFor(`${n} requests served by ${ip}`, async () => {
    const now = (await proxyEndpoints(a)).get(ip) ?? 0;
    return now - base >= n ? true : undefined;
  }, 60_000);
}

/** Polls `check` every 25 ms until true; returns when (ms since the epoch) it saw it. */
export async function seen(what: string, check: () => Promise<boolean>, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return Date.now();
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}
