/**
 * Node agent memory per captured pod, in a process of its own (so its RSS is the agent's, not a
 * bench's): `runNode` in process with `capture` (or, `--capture=false`, without it, for
 * comparison) and its node proxy, fed from memory `--services` mesh Services with VIPs (one
 * port each, appProtocol http); then `--pods` network namespaces (`ip netns add`, loopback up:
 * the node proxy binds each pod's listeners there; no servers) whose Pod objects arrive in one
 * revision. Reads RSS and V8 heap (after GC) and the node proxy's RSS with no pod and once every
 * pod is served (with capture: its table in place and its capture listener served; without: its
 * listeners ACKed). Prints one JSON line; the namespaces go, also on failure. Started by
 * bench/capture_hop.ts.
 *
 *   deno run -A --v8-flags=--expose-gc bench/capture_memory.ts [--pods 100] [--services 10]
 *     [--capture=true]
 * @module
 */
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { nodeDefaults, runNode } from "../agent/node/mod.ts";
import { createPod, type TestPod } from "../e2e/netns.ts";
import { podObject } from "../e2e/mesh_harness.ts";
import { waitFor } from "../e2e/peers/proc.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    pods: { type: "string", default: "100" },
    services: { type: "string", default: "10" },
    capture: { type: "string", default: "true" },
  },
});
const n = Number(values.pods), services = Number(values.services);
const capture = values.capture !== "false";
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --v8-flags=--expose-gc");
const NODE = "node-1";
const kib = (b: number) => Math.round(b / 1024);

const settle = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 300));
  }
  return Deno.memoryUsage();
};
/** VmRSS of a process, KiB. */
const rssOf = async (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(await Deno.readTextFile(`/proc/${pid}/status`))?.[1] ?? NaN);

const objects: SourceObject[] = [];
for (let i = 0; i < services; i++) {
  const name = `svc-${i}`, namespace = "bench";
  const vip = `198.18.${80 + (i >> 8)}.${i & 255}`;
  objects.push({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name, namespace, creationTimestamp: "2026-01-01T00:00:00Z" },
    spec: {
      clusterIP: vip,
      ports: [{ name: "http", port: 8080, targetPort: 3000, appProtocol: "http" }],
    },
  }, {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
    addressType: "IPv4",
    ports: [{ name: "http", port: 3000 }],
    endpoints: [{ addresses: [`198.19.200.${1 + (i % 250)}`] }],
  });
}

const pods: TestPod[] = [];
const source = new MemorySource(objects);
const node = await runNode({
  ...nodeDefaults,
  source,
  nodeName: NODE,
  adminAddress: "127.0.0.1:0",
  xdsAddress: "127.0.0.1:0",
  dnsAddress: "none",
  capture,
  logger: new Logger("bench", () => {}),
});
let closed = false;
const cleanup = async () => {
  if (closed) return;
  closed = true;
  await node.close().catch(() => {});
  for (const p of pods) await p.remove();
};
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, () => cleanup().finally(() => Deno.exit(130)));
}
try {
  await node.waitReady(90_000);
  const listeners = () => node.snapshots.resources(NODE)?.listeners.length ?? 0;
  const listeners0 = listeners();
  for (let i = 0; i < n; i++) pods.push(await createPod("aether-capm"));
  const start = await settle();
  const envoyPid = node.envoy!.pid!;
  const envoyBefore = await rssOf(envoyPid);

  const t0 = performance.now();
  source.apply(...pods.map((p, i) =>
    podObject(p, "app", `app-${i}`, NODE, {
      serviceAccount: "app",
      ip: `198.19.${i >> 8}.${1 + (i & 255)}`,
    })
  ));
  const served = capture
    ? async () => {
      const res = await fetch(`http://${node.admin.address}/debug/capture`);
      const doc = await res.json() as { pods: { state: string; listenerServed: boolean }[] };
      return doc.pods.length === n &&
          doc.pods.every((p) => p.state === "captured" && p.listenerServed)
        ? true
        : undefined;
    }
    : () => Promise.resolve(listeners() >= listeners0 + n && node.ready() ? true : undefined);
  await waitFor(`${n} pods served`, served, 180_000);
  const servedMs = Math.round(performance.now() - t0);
  const after = await settle();
  const envoyAfter = await rssOf(envoyPid);
  const per100 = (x: number) => Math.round(x * (100 / Math.max(1, n)));
  console.log(JSON.stringify({
    capture,
    pods: n,
    services,
    listenersBefore: listeners0,
    listenersAfter: listeners(),
    servedMs,
    rssBeforeKiB: kib(start.rss),
    rssAfterKiB: kib(after.rss),
    heapBeforeKiB: kib(start.heapUsed),
    heapAfterKiB: kib(after.heapUsed),
    rssKiBPer100: per100(kib(after.rss - start.rss)),
    heapKiBPer100: per100(kib(after.heapUsed - start.heapUsed)),
    externalKiBPer100: per100(kib(after.external - start.external)),
    envoyRssBeforeKiB: envoyBefore,
    envoyRssAfterKiB: envoyAfter,
    envoyRssKiBPer100: per100(envoyAfter - envoyBefore),
  }));
} finally {
  await cleanup();
}
Deno.exit(0);
