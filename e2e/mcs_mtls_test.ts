/**
 * Issue 20 acceptance, two data planes on one machine (e2e/mcs_clusters.ts): `web` exported by
 * cluster B only. A pod in cluster A resolves `web.shop.svc.clusterset.local` through its DNS
 * (A's node agent's responder), calls it by name — captured at the clusterset VIP by A's node
 * proxy — and also through `front`, whose HTTPRoute's backendRef is the ServiceImport: B's pod
 * answers over SPIFFE mTLS and sees XFCC with its own ID (By=) and the caller's (URI=).
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { waitFor } from "./peers/proc.ts";
import { type McsCluster, startMcsClusters } from "./mcs_clusters.ts";
import {
  CLUSTERSET_NAME,
  FRONT_VIP,
  frontRoute,
  IMPORT_VIP,
  NS,
  podObjects,
  webImport,
  webService,
} from "./mcs_scene.ts";

interface CallResult {
  addresses: string[];
  counts: Record<string, number>;
  first: { status: number; headers?: Record<string, string> };
}

/** Runs e2e/mcs_client.ts in `cluster`'s pod `key` against `name`. */
async function call(cluster: McsCluster, key: string, name: string, count = 1) {
  const ip = await ensurePeer("ip");
  const out = await new Deno.Command(ip, {
    args: ["netns", "exec", cluster.pods[key].pod.netns, Deno.execPath(), "run", "-A"]
      .concat([
        "e2e/mcs_client.ts",
        "--name",
        name,
        "--dns",
        `${cluster.dns.ip}:${cluster.dns.port}`,
      ])
      .concat(["--count", String(count)]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout).trim();
  if (!out.success) throw new Error(`mcs_client: ${new TextDecoder().decode(out.stderr)}`);
  return JSON.parse(text.split("\n").pop()!) as CallResult;
}

Deno.test("mcs e2e: a pod in cluster A calls web, exported by cluster B only, over mTLS", async (t) => {
  const scene = await startMcsClusters({
    pods: {
      a: [{ key: "caller", serviceAccount: "caller" }],
      b: [{ key: "web", serviceAccount: "web", echo: true }],
    },
    objects: (cluster, pods, nodeName) =>
      cluster === "a"
        ? [...podObjects(Object.values(pods), nodeName), ...webImport(), ...frontRoute()]
        : [
          ...podObjects(Object.values(pods), nodeName),
          ...webService([pods.web], nodeName),
          ...webImport(),
        ],
  });
  const { a, b, spire } = scene;
  const td = spire.trustDomain;
  try {
    const registrar = scene.writer(b, 10);
    await registrar.publish(b.records());
    const byName = (count = 1) => call(a, "caller", CLUSTERSET_NAME, count);
    await t.step("the clusterset name resolves to the VIP and B's pod answers it", async () => {
      await waitFor("B's web answers A's caller", async () => {
        const r = await byName();
        return r.counts.web === 1 ? true : undefined;
      }, 90_000);
      const r = await byName(10);
      assertEquals(r.addresses, [IMPORT_VIP]);
      assertEquals(r.counts, { web: 10 });
      const xfcc = r.first.headers?.["x-forwarded-client-cert"] ?? "";
      assert(xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`), xfcc);
      assert(xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`), xfcc);
    });
    await t.step("an HTTPRoute backendRef to the ServiceImport reaches B's pod", async () => {
      const r = await call(a, "caller", "front.aether.internal", 10);
      assertEquals(r.addresses, [FRONT_VIP]);
      assertEquals(r.counts, { web: 10 });
      const xfcc = r.first.headers?.["x-forwarded-client-cert"] ?? "";
      assert(xfcc.includes(`By=spiffe://${td}/ns/${NS}/sa/web`), xfcc);
      assert(xfcc.includes(`URI=spiffe://${td}/ns/${NS}/sa/caller`), xfcc);
    });
    assert(b.node.ready());
  } finally {
    await scene.close();
  }
});
