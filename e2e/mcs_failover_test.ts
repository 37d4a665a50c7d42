/**
 * Issue 20 acceptance, two data planes on one machine (e2e/mcs_clusters.ts): `web` exported by
 * both clusters; A's caller calls it by its clusterset name (A's DNS → VIP → A's node proxy).
 * Locality first: A's pod answers. A's pod gone (its echo stopped, requests to it fail, then A's
 * registrar deletes its endpoint) → traffic fails over to B's pod, and no request sent after A's
 * proxy ejected A's endpoint fails. B's registrar SIGKILLed → B's endpoints leave A's proxy within the lease
 * TTL + 2 s, no request fails; a new registrar → they are back; a graceful hand-over between two
 * of B's registrars deletes no key.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { type Proc, waitFor } from "./peers/proc.ts";
import { type McsCluster, startMcsClusters } from "./mcs_clusters.ts";
import { CLUSTERSET_NAME, podObjects, type ScenePod, webImport, webService } from "./mcs_scene.ts";
import { proxyEndpoints, seen, served, startLoad } from "./mcs_failover_steps.ts";

/** Lease TTL of B's registrars (seconds). */
const TTL = 4;

/** Runs e2e/mcs_client.ts in A's caller pod: counts by backend over `count` calls by name. */
async function callByName(a: McsCluster, count: number): Promise<Record<string, number>> {
  const ip = await ensurePeer("ip");
  const out = await new Deno.Command(ip, {
    args: ["netns", "exec", a.pods.caller.pod.netns, Deno.execPath(), "run", "-A"]
      .concat(["e2e/mcs_client.ts", "--name", CLUSTERSET_NAME])
      .concat(["--dns", `${a.dns.ip}:${a.dns.port}`, "--count", String(count)]),
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`mcs_client: ${new TextDecoder().decode(out.stderr)}`);
  const text = new TextDecoder().decode(out.stdout).trim();
  return JSON.parse(text.split("\n").pop()!).counts;
}

/** The registry's leases (etcd's JSON gateway). */
async function leaseCount(url: string): Promise<number> {
  const res = await fetch(`${url}/v3/lease/leases`, { method: "POST", body: "{}" });
  const json = await res.json() as { leases?: unknown[] };
  return json.leases?.length ?? 0;
}

Deno.test("mcs e2e: web exported by A and B — locality, failover, registrar loss and hand-over", async (t) => {
  const scene = await startMcsClusters({
    pods: {
      a: [{ key: "caller", serviceAccount: "caller" }, {
        key: "web-a",
        serviceAccount: "web",
        echo: true,
      }],
      b: [{ key: "web-b", serviceAccount: "web", echo: true }],
    },
    objects: (cluster, pods, nodeName) => [
      ...podObjects(Object.values(pods), nodeName),
      ...webService([pods[cluster === "a" ? "web-a" : "web-b"]], nodeName),
      ...webImport(),
    ],
  });
  const { a, b, etcd } = scene;
  const aIp = a.pods["web-a"].pod.ip, bIp = b.pods["web-b"].pod.ip;
  const procs: Proc[] = [];
  const loads: { kill(): Promise<void> }[] = [];
  const dir = await Deno.makeTempDir({ prefix: "aether-mcs-load-" });
  const figures: Record<string, unknown> = {};
  try {
    const registrarA = scene.writer(a, 10);
    await registrarA.publish(a.records());
    let registrarB = await scene.writerProcess(b, TTL, b.records());
    procs.push(registrarB);
    await t.step("locality first: A's caller is answered by A's pod", async () => {
      await waitFor("A's web answers", async () => {
        const c = await callByName(a, 1);
        return c["web-a"] === 1 ? true : undefined;
      }, 90_000);
      assertEquals(await callByName(a, 20), { "web-a": 20 });
      // B's pod is there, as failover (priority 1).
      await waitFor("B's endpoint in A's proxy", async () => {
        return (await proxyEndpoints(a)).has(bIp) ? true : undefined;
      });
    });
    await t.step("A's pod endpoint deleted: traffic fails over to B", async () => {
      const load = await startLoad(a, dir);
      loads.push(load);
      await served(a, aIp, 20);
      const removed = a.objects.findIndex((o) => o.kind === "EndpointSlice");
      a.objects.splice(removed - 1, 2, ...webService([] as ScenePod[], a.nodeName));
      await a.write();
      // The pod dies first (its requests fail), then its endpoint leaves the registry.
      await a.echos["web-a"].stop();
      await waitFor("a request to A's dead pod failed", async () => {
        const rows = (await a.node.envoy!.admin("/stats?filter=upstream_rq_5xx")).split("\n");
        return rows.some((r) => r.includes("mcs-") && !r.endsWith(": 0")) ? true : undefined;
      });
      const t0 = Date.now();
      await registrarA.publish(a.records());
      const ejected = await seen("A's endpoint ejected from A's proxy", async () => {
        const eps = await proxyEndpoints(a);
        return !eps.has(aIp) && eps.has(bIp);
      });
      await served(a, bIp, 50);
      const r = await load.stop();
      figures.failover = { ejectedAfterMs: ejected - t0, failed: r.failed, sent: r.sent };
      assert(r.ok > 0, JSON.stringify(r));
      assert(
        r.lastFailedSentAt <= ejected,
        `a request sent ${r.lastFailedSentAt - ejected} ms after the ejection failed: ${
          JSON.stringify(r)
        }`,
      );
      assertEquals(await callByName(a, 10), { "web-b": 10 });
    });
    await t.step("A's pod back: locality again", async () => {
      await a.restartEcho("web-a");
      a.objects.splice(
        a.objects.findIndex((o) => o.kind === "Service" && o.metadata.name === "web"),
        2,
        ...webService([a.pods["web-a"]], a.nodeName),
      );
      await a.write();
      await registrarA.publish(a.records());
      await waitFor("A's web answers again", async () => {
        const c = await callByName(a, 1);
        return c["web-a"] === 1 ? true : undefined;
      }, 60_000);
      assertEquals(await callByName(a, 10), { "web-a": 10 });
    });
    await t.step("B's registrar SIGKILLed: B's endpoints leave A's proxy, none fails", async () => {
      const load = await startLoad(a, dir);
      loads.push(load);
      await served(a, aIp, 20);
      const t0 = Date.now();
      registrarB.child.kill("SIGKILL");
      const gone = await seen("B's endpoint gone from A's proxy", async () => {
        return !(await proxyEndpoints(a)).has(bIp);
      }, (TTL + 30) * 1000);
      await served(a, aIp, 20);
      const r = await load.stop();
      figures.registrarKilled = { goneAfterMs: gone - t0, ttlMs: TTL * 1000, failed: r.failed };
      assert(gone - t0 <= (TTL + 2) * 1000, `gone after ${gone - t0} ms`);
      assertEquals(r.failed, 0, JSON.stringify(r));
    });
    await t.step("B's registrar restarted: B's endpoints are back", async () => {
      const t0 = Date.now();
      registrarB = await scene.writerProcess(b, TTL, b.records());
      procs.push(registrarB);
      const back = await seen("B's endpoint back in A's proxy", async () => {
        return (await proxyEndpoints(a)).has(bIp);
      });
      figures.registrarRestarted = { backAfterMs: back - t0 };
    });
    await t.step("a graceful hand-over between B's registrars deletes nothing", async () => {
      const prefix = "/aether/v1/eu/b/";
      const from = (await scene.kv.range("/aether/v1/eu/")).revision;
      const deletes: string[] = [];
      let marked = false;
      // Both origins: A's marker key, put last, says the watch has delivered everything before it.
      const watch = scene.kv.watch("/aether/v1/eu/", from, {
        onEvents: (events) => {
          for (const e of events) {
            if (e.type === "delete" && e.key.startsWith(prefix)) deletes.push(e.key);
            if (e.type === "put" && e.kv.key.endsWith("/exports/shop/marker")) marked = true;
          }
        },
        onCompacted: () => deletes.push("(compacted)"),
        onError: () => {},
      });
      try {
        const leases = await leaseCount(etcd.url);
        const next = await scene.writerProcess(b, TTL, b.records());
        procs.push(next);
        await registrarB.stop(); // SIGTERM: no revoke; the old lease expires with nothing on it
        await waitFor("the old registrar's lease expired", async () => {
          return (await leaseCount(etcd.url)) < leases + 1 ? true : undefined;
        }, (TTL + 30) * 1000);
        await registrarA.publish(new Map([...a.records(), ["exports/shop/marker", "{}"]]));
        await waitFor("the watch caught up", () => Promise.resolve(marked || undefined));
        assert((await proxyEndpoints(a)).has(bIp), "B's endpoint stays in A's proxy");
        assertEquals(deletes, []);
        figures.handOver = { deletes: deletes.length };
      } finally {
        watch.cancel();
      }
    });
    console.log(`mcs failover figures: ${JSON.stringify(figures)}`);
  } finally {
    for (const l of loads) await l.kill();
    for (const p of procs) await p.stop();
    await scene.close();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
