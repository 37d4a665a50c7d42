/**
 * One mesh hop, SPIFFE mTLS vs plaintext, on real Envoy + SPIRE with CNI bridge pods: pod a calls
 * service b through the node proxy at `--rate` req/s for `--seconds` (plaintext: node proxy →
 * b:9090; mTLS: node proxy → b:15008 → inbound listener → b:9090). Then agent memory for 100
 * identities' SVIDs (NodeIdentities, one Delegated Identity subscription each; V8 heap after GC).
 * Prints one JSON line.
 *
 * deno run -A --v8-flags=--expose-gc bench/mtls_hop.ts [--rate 1000] [--seconds 20]
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { nodeDefaults, runNode } from "../agent/node/run.ts";
import { identitySelectors, NodeIdentities } from "../agent/identity/mod.ts";
import { createPodNetwork } from "../e2e/netns.ts";
import { type Proc, waitFor } from "../e2e/peers/proc.ts";
import { startSpire } from "../e2e/spire.ts";
import { toYaml } from "../e2e/harness.ts";
import { echoInPod, loadFrom, netPodObject, podService } from "../e2e/identity_harness.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    rate: { type: "string", default: "1000" },
    seconds: { type: "string", default: "20" },
    identities: { type: "string", default: "100" },
  },
});
const rate = Number(values.rate), seconds = Number(values.seconds);
const quiet = new Logger("bench", () => {});
const gc = (globalThis as { gc?: () => void }).gc ?? (() => {});

const spire = await startSpire();
const net = await createPodNetwork();
const procs: Proc[] = [];
const dir = await Deno.makeTempDir({ prefix: "aether-bench-mtls-" });
try {
  await spire.registerPod("a", "client");
  await spire.registerPod("b", "b");
  const a = await net.addPod("aether-a"), b = await net.addPod("aether-b");
  procs.push(await echoInPod(b, "b", 9090));
  await Deno.writeTextFile(
    join(dir, "mesh.yaml"),
    toYaml(
      netPodObject(a, "a", "client-0", "client", "node-1"),
      netPodObject(b, "b", "b-0", "b", "node-1"),
      ...podService("b", "b", [b.ip], 9090),
    ),
  );
  const measure = async (mtls: boolean) => {
    const node = await runNode({
      ...nodeDefaults,
      config: dir,
      nodeName: "node-1",
      adminAddress: "127.0.0.1:0",
      xdsAddress: "127.0.0.1:0",
      dnsAddress: "none",
      logger: quiet,
      ...(mtls ? { spireAdminSocket: spire.adminSocket, trustDomain: spire.trustDomain } : {}),
    });
    try {
      await waitFor("node ready with its secrets", () =>
        Promise.resolve(
          node.ready() && (!mtls || (node.snapshots.resources("node-1")?.secrets.length ?? 0) >= 3)
            ? true
            : undefined,
        ), 90_000);
      await waitFor("b answers", async () => {
        const r = await loadFrom(a, "b.aether.internal:8080", 50, 1);
        return r.failed === 0 && r.ok > 0 ? true : undefined;
      }, 60_000);
      await loadFrom(a, "b.aether.internal:8080", rate, 3, 16); // warm-up
      return await loadFrom(a, "b.aether.internal:8080", rate, seconds, 16);
    } finally {
      await node.close();
    }
  };
  const plain = await measure(false);
  const mtls = await measure(true);

  // Agent memory for N identities' SVIDs.
  const n = Number(values.identities);
  for (let i = 0; i < n; i++) await spire.registerPod("m", `sa-${i}`);
  gc();
  const heap0 = Deno.memoryUsage().heapUsed;
  const ids = new NodeIdentities({
    adminSocket: spire.adminSocket,
    logger: quiet,
    metrics: new Registry(),
    onChange: () => {},
  });
  ids.setWanted(Array.from({ length: n }, (_, i) => ({
    spiffeId: `spiffe://${spire.trustDomain}/ns/m/sa/sa-${i}`,
    selectors: identitySelectors("m", `sa-${i}`),
  })));
  await waitFor(
    `${n} SVIDs`,
    () => Promise.resolve(ids.svids().length === n || undefined),
    180_000,
  );
  gc();
  const heap1 = Deno.memoryUsage().heapUsed;
  ids.close();
  console.log(JSON.stringify({
    rate,
    seconds,
    plainSent: plain.sent,
    plainFailed: plain.failed,
    plainRate: Math.round(plain.rate),
    plainP50Ms: plain.p50Ms,
    plainP99Ms: plain.p99Ms,
    mtlsSent: mtls.sent,
    mtlsFailed: mtls.failed,
    mtlsRate: Math.round(mtls.rate),
    mtlsP50Ms: mtls.p50Ms,
    mtlsP99Ms: mtls.p99Ms,
    addedP50Ms: Math.round((mtls.p50Ms - plain.p50Ms) * 1000) / 1000,
    addedP99Ms: Math.round((mtls.p99Ms - plain.p99Ms) * 1000) / 1000,
    identities: n,
    heapKiBPer100Svids: Math.round(((heap1 - heap0) / 1024) * (100 / n)),
  }));
} finally {
  for (const p of procs.reverse()) await p.stop();
  await net.remove();
  await spire.stop();
  await Deno.remove(dir, { recursive: true }).catch(() => {});
}
