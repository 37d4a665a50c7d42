/**
 * What identity e2e tests ask a running mesh: a call's status from inside a pod (and when it
 * answers or fails), an SVID's expiry, whether a node's Envoy still holds a certificate, a
 * cluster's Envoy stats and open upstream connections.
 * @module
 */
import { X509Certificate } from "node:crypto";
import type { NodeAgent } from "../agent/node/mod.ts";
import { curlFrom } from "./mesh_harness.ts";
import type { TestPod } from "./netns.ts";
import { waitFor } from "./peers/proc.ts";

/** The status of one request from `pod` to `host` through its node proxy (0: no answer). */
export async function statusFrom(pod: TestPod, host: string): Promise<number> {
  try {
    return (await curlFrom(pod, host)).first.status;
  } catch {
    return 0;
  }
}

/** When a PEM certificate (the leaf of a chain) expires, ms since the epoch. */
export function expiryOf(certPem: string): number {
  return Date.parse(new X509Certificate(certPem).validTo);
}

/** Whether the node's Envoy holds a certificate with this serial number (`/certs`). */
export async function holdsCertificate(node: NodeAgent, serial: string): Promise<boolean> {
  const norm = (s: string) => s.toLowerCase().replace(/^0+/, "");
  return norm(await node.envoy!.admin("/certs")).includes(norm(serial));
}

/** Every stat of one cluster in the node's Envoy, by stat name without `cluster.<name>.`. */
export async function clusterStats(
  node: NodeAgent,
  cluster: string,
): Promise<Record<string, number>> {
  const json = JSON.parse(await node.envoy!.admin("/stats?format=json")) as {
    stats: { name?: string; value?: number }[];
  };
  const prefix = `cluster.${cluster}.`;
  const out: Record<string, number> = {};
  for (const s of json.stats) {
    if (s.name?.startsWith(prefix)) out[s.name.slice(prefix.length)] = s.value ?? 0;
  }
  return out;
}

/** The open upstream connections of one cluster in the node's Envoy. */
export async function upstreamActive(node: NodeAgent, cluster: string): Promise<number> {
  return (await clusterStats(node, cluster)).upstream_cx_active ?? 0;
}

/** Waits until a request from `pod` to `host` answers 200. */
export async function answers(pod: TestPod, host: string, timeoutMs = 90_000): Promise<void> {
  await waitFor(`${pod.netns} → ${host}`, async () => {
    return await statusFrom(pod, host) === 200 || undefined;
  }, timeoutMs);
}

/**
 * Polls `pod → host` until it fails (any answer but 200) at or after `since` (ms since the
 * epoch), at most `slackS` seconds after it. Returns the failing status, how many seconds after
 * `since` it came and how many requests sent after `since` still answered 200 before it, or
 * undefined when it kept answering 200.
 */
export async function failsAfter(
  pod: TestPod,
  host: string,
  since: number,
  slackS: number,
): Promise<{ status: number; afterS: number; okAfter: number } | undefined> {
  const deadline = since + slackS * 1000;
  let okAfter = 0;
  while (Date.now() < deadline) {
    const sent = Date.now();
    const status = await statusFrom(pod, host);
    if (status !== 200 && Date.now() >= since) {
      return { status, afterS: (Date.now() - since) / 1000, okAfter };
    }
    if (status === 200 && sent >= since) okAfter++;
    await new Promise((r) => setTimeout(r, 250));
  }
  return undefined;
}

/**
 * Seconds after `since` at which the node's Envoy has no open upstream connection left in
 * `cluster` (polled for at most `slackS` seconds from now), or undefined when it still has one.
 */
export async function connectionsClosed(
  node: NodeAgent,
  cluster: string,
  since: number,
  slackS: number,
): Promise<number | undefined> {
  return await waitFor(`${cluster}'s connections closed`, async () => {
    return await upstreamActive(node, cluster) === 0 ? (Date.now() - since) / 1000 : undefined;
  }, slackS * 1000).catch(() => undefined);
}

/**
 * Seconds after `since` at which the node's Envoy no longer holds this certificate (polled for at
 * most `slackS` seconds from now), or undefined when it still does.
 */
export async function certificateGone(
  node: NodeAgent,
  certPem: string,
  since: number,
  slackS: number,
): Promise<number | undefined> {
  const serial = new X509Certificate(certPem).serialNumber;
  return await waitFor(`a certificate dropped`, async () => {
    return await holdsCertificate(node, serial) ? undefined : (Date.now() - since) / 1000;
  }, slackS * 1000).catch(() => undefined);
}
