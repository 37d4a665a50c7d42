/**
 * KubeSource against a real kube-apiserver (on etcd, with TLS client certificates): the shared
 * Source contract, objects created/updated/deleted, CRD presence (a kind appears when its CRD is
 * installed), the API server stopped and restarted (no empty revision, later edits apply), a 410
 * relist after etcd compaction, and the node role's Pod field selector.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../../testbed/assert.ts";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { Logger } from "../log/mod.ts";
import { Registry } from "../metrics/mod.ts";
import { contractService, sourceContract } from "../source/_contract_test_utils.ts";
import type { SourceRevision } from "../source/mod.ts";
import { installCrds, type Kube, startKube } from "../../e2e/peers/kube.ts";
import { KubeClient } from "./client.ts";
import { Reflector } from "./reflector.ts";
import { KubeSource } from "./source.ts";
import { defaultKinds } from "./kinds.ts";
import { ROUTE_KINDS } from "../gatewayapi/mod.ts";

const quiet = new Logger("kube-test", () => {});
const backoff = { initialMs: 100, maxMs: 1000 };

async function withKube(fn: (kube: Kube) => Promise<void>): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix: "aether-kube-source-" });
  const kube = await startKube(dir);
  try {
    await fn(kube);
  } finally {
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
}

async function must(kube: Kube, method: string, path: string, body?: unknown) {
  const res = await kube.request(method, path, body);
  assert(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Collects revisions; `until` waits (bounded) for one that satisfies a predicate. */
function collector() {
  const seen: SourceRevision[] = [];
  let wake = () => {};
  return {
    seen,
    push: (s: SourceRevision) => {
      seen.push(s);
      wake();
    },
    async until(what: string, ok: (s: SourceRevision) => boolean, ms = 60_000) {
      const deadline = Date.now() + ms;
      while (!(seen.length && ok(seen[seen.length - 1]))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await Promise.race([
          new Promise<void>((r) => (wake = r)),
          new Promise((r) => setTimeout(r, 200)),
        ]);
      }
      return seen[seen.length - 1];
    },
  };
}

const names = (s: SourceRevision, kind: string) =>
  s.objects.filter((o) => o.kind === kind).map((o) =>
    `${o.metadata.namespace ?? ""}/${o.metadata.name}`
  )
    .sort();

/** Polls `ok` every 100 ms for up to 120 s. */
async function poll(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

Deno.test("kube source: real kube-apiserver", async (t) => {
  await withKube(async (kube) => {
    const client = new KubeClient({ kubeconfig: kube.kubeconfig });
    await must(kube, "POST", "/api/v1/namespaces", { metadata: { name: "contract" } });

    await t.step("the shared Source contract", async () => {
      await must(
        kube,
        "POST",
        "/api/v1/namespaces/contract/services",
        contractService("one", "contract"),
      );
      await sourceContract(() =>
        Promise.resolve({
          source: new KubeSource({ client, kinds: ["Service"], logger: quiet, backoff }),
          addTwo: () =>
            must(
              kube,
              "POST",
              "/api/v1/namespaces/contract/services",
              contractService("two", "contract"),
            ),
        })
      );
    });

    const metrics = new Registry();
    const source = new KubeSource({
      client,
      kinds: defaultKinds(ROUTE_KINDS),
      logger: quiet,
      metrics,
      backoff,
    });
    const c = collector();
    await source.start(c.push);
    try {
      await t.step("without Gateway API CRDs only core kinds are watched", () => {
        assertEquals(source.watchedKinds.map((k) => k.kind), [
          "Namespace",
          "Service",
          "EndpointSlice",
          "Secret",
        ]);
        assertEquals(names(c.seen[0], "Service").includes("contract/one"), true);
      });

      await t.step(
        "CRDs installed later are picked up; TCPRoute (experimental only) stays unwatched",
        async () => {
          await installCrds(kube, join(await ensurePeer("gateway-api-crds"), "standard"));
          const deadline = Date.now() + 60_000;
          // Each CRD becomes Established on its own: wait for every kind the test names.
          const expected = ["HTTPRoute", "TLSRoute", "ReferenceGrant", "GRPCRoute", "Gateway"];
          const watching = () => new Set(source.watchedKinds.map((k) => k.kind));
          while (
            !expected.every((k) => watching().has(k)) && Date.now() < deadline
          ) {
            await new Promise((r) => setTimeout(r, 100));
          }
          const kinds = Object.fromEntries(source.watchedKinds.map((k) => [k.kind, k.apiVersion]));
          assertEquals(kinds.HTTPRoute, "gateway.networking.k8s.io/v1");
          assertEquals(kinds.TLSRoute, "gateway.networking.k8s.io/v1");
          assertEquals(kinds.ReferenceGrant, "gateway.networking.k8s.io/v1beta1");
          assertEquals(kinds.TCPRoute, undefined);
          assertEquals(kinds.UDPRoute, undefined);
          const snap = await c.until(
            "a revision whose kinds name HTTPRoute",
            (s) => s.kinds?.includes("HTTPRoute") ?? false,
          );
          assertEquals(snap.kinds!.includes("TCPRoute"), false);
        },
      );

      const routes = "/apis/gateway.networking.k8s.io/v1/namespaces/contract/httproutes";
      const route = (host: string) => ({
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "web", namespace: "contract" },
        spec: { parentRefs: [{ name: "edge" }], hostnames: [host] },
      });

      await t.step("created, updated and deleted objects show up", async () => {
        await must(kube, "POST", routes, route("a.example.com"));
        let s = await c.until("HTTPRoute created", (s) => names(s, "HTTPRoute").length === 1);
        const created = s.objects.find((o) => o.kind === "HTTPRoute")!;
        assertEquals(created.apiVersion, "gateway.networking.k8s.io/v1");
        assertEquals(s.admitted, true, "objects from the API server are not admitted again");
        // The API server applied the CRD defaults; managedFields are not kept.
        assertEquals((created.spec as { rules: unknown[] }).rules.length, 1);
        assertEquals(created.metadata.managedFields, undefined);
        const service = s.objects.find((o) => o.kind === "Service" && o.metadata.name === "one");

        await must(kube, "PATCH", `${routes}/web`, { spec: { hostnames: ["b.example.com"] } });
        s = await c.until(
          "HTTPRoute updated",
          (s) =>
            JSON.stringify(s.objects.find((o) => o.kind === "HTTPRoute")?.spec).includes(
              "b.example.com",
            ),
        );
        assert(
          s.objects.find((o) => o.kind === "Service" && o.metadata.name === "one") === service,
          "an unchanged object stays the same JS object across revisions",
        );
        await must(kube, "DELETE", `${routes}/web`);
        await c.until("HTTPRoute deleted", (s) => names(s, "HTTPRoute").length === 0);
      });

      await t.step(
        "API server stopped and restarted: no empty revision, later edits apply",
        async () => {
          await must(kube, "POST", routes, route("c.example.com"));
          await c.until("route before the outage", (s) => names(s, "HTTPRoute").length === 1);
          const before = c.seen.length;
          const errorsBefore = metrics.render();
          // A kind whose CRD was just installed may still be listing (or backing off a 404).
          await poll("healthy before the outage", () => source.unhealthyKinds(0).length === 0);
          await kube.stopApiServer();
          const stopped = Date.now();
          await poll(
            "HTTPRoute reported failing",
            () => source.unhealthyKinds(0).includes("HTTPRoute"),
          );
          await new Promise((r) => setTimeout(r, Math.max(0, 3000 - (Date.now() - stopped))));
          await kube.startApiServer();
          await must(kube, "PATCH", `${routes}/web`, { spec: { hostnames: ["d.example.com"] } });
          await c.until("edit after the restart", (s) =>
            JSON.stringify(
              s.objects.find((o) => o.kind === "HTTPRoute")?.spec,
            ).includes("d.example.com"));
          await poll("every kind healthy again", () => source.unhealthyKinds(0).length === 0);
          for (const s of c.seen.slice(before)) {
            assertEquals(
              names(s, "HTTPRoute"),
              ["contract/web"],
              `revision ${s.revision} kept the route`,
            );
            assert(
              names(s, "Service").includes("contract/one"),
              `revision ${s.revision} kept the Services`,
            );
          }
          assert(metrics.render() !== errorsBefore);
          assert(/aether_kube_watch_errors_total\{kind="HTTPRoute"\} [1-9]/.test(metrics.render()));
        },
      );

      await t.step(
        "API server back: every kind retries at once, not after its backoff",
        async () => {
          // A backoff so long that its first retry (≥ 0.5 × 240 s after the first failure) comes
          // far later than the bound asserted: only the /version probe can bring the edit in time.
          const slow = new KubeSource({
            client,
            kinds: ["Service", "HTTPRoute"],
            logger: quiet,
            backoff: { initialMs: 240_000, maxMs: 240_000 },
            probeMs: 500,
          });
          const s2 = collector();
          await slow.start(s2.push);
          try {
            await s2.until("route listed", (s) => names(s, "HTTPRoute").length === 1);
            await kube.stopApiServer();
            await poll(
              "every kind reported failing",
              () => slow.unhealthyKinds(0).length === 3,
            );
            assertEquals(slow.reflectorOf("HTTPRoute")!.failure, "away");
            const failedAt = Math.min(
              ...["Service", "HTTPRoute"].map((k) => slow.reflectorOf(k)!.failingSince!),
            );
            await kube.startApiServer();
            await must(kube, "PATCH", `${routes}/web`, { spec: { hostnames: ["e.example.com"] } });
            await must(kube, "PATCH", "/api/v1/namespaces/contract/services/one", {
              metadata: { labels: { edited: "yes" } },
            });
            // Correctness bound, not a benchmark: before the old backoff would have retried at all.
            const bound = failedAt + 120_000 - Date.now();
            await s2.until(
              "both edits after the restart",
              (s) =>
                JSON.stringify(s.objects).includes("e.example.com") &&
                s.objects.some((o) =>
                  o.kind === "Service" && o.metadata.name === "one" &&
                  o.metadata.labels?.edited === "yes"
                ),
              bound,
            );
            assertEquals(slow.unhealthyKinds(0), [], "every kind healthy again");
          } finally {
            await slow.stop();
          }
        },
      );

      await t.step("a kind the server refuses (404) is told from the server away", async () => {
        const own = new Registry();
        const refused = new Reflector<unknown>({
          client,
          path: "/apis/example.invalid/v1/things",
          kind: "Thing",
          transform: (raw) => raw,
          onChange: () => {},
          logger: quiet,
          metrics: {
            events: own.counter("test_events_total", "-"),
            lists: own.counter("test_lists_total", "-"),
            errors: own.counter("test_errors_total", "-"),
          },
          backoff: { initialMs: 240_000, maxMs: 240_000 },
        });
        refused.start();
        try {
          await poll("the 404 seen", () => refused.failingSince !== undefined);
          // Refused, not away: the source's recovery probe does not wake it (retryNow ignores it).
          assertEquals(refused.failure, "refused");
          assert(!refused.synced);
        } finally {
          await refused.stop();
        }
      });

      await t.step(
        "410 Gone (history compacted in etcd) relists without losing objects",
        async () => {
          const reflector = source.reflectorOf("Service")!;
          const lists = () =>
            Number(
              /aether_kube_lists_total\{kind="Service"\} (\d+)/.exec(metrics.render())?.[1] ?? 0,
            );
          const old = reflector.resourceVersion;
          // Move etcd on, compact away everything up to now, and restart the API server so its
          // watch cache starts after `old` too: a watch from `old` can only be answered by 410.
          await must(
            kube,
            "POST",
            "/api/v1/namespaces/contract/services",
            contractService("three", "contract"),
          );
          await c.until("three", (s) => names(s, "Service").includes("contract/three"));
          const status = await (await fetch(`${kube.etcdUrl}/v3/maintenance/status`, {
            method: "POST",
            body: "{}",
          })).json();
          const compacted = await fetch(`${kube.etcdUrl}/v3/kv/compaction`, {
            method: "POST",
            body: JSON.stringify({ revision: Number(status.header.revision), physical: true }),
          });
          assertEquals(compacted.status, 200, await compacted.text());
          await kube.startApiServer();
          await new Promise((r) => setTimeout(r, 1000));
          const listsBefore = lists();
          const before = c.seen.length;
          reflector.resumeFrom(old);
          const deadline = Date.now() + 60_000;
          while (lists() === listsBefore && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 100));
          }
          assert(lists() > listsBefore, "the 410 made it relist");
          await must(
            kube,
            "POST",
            "/api/v1/namespaces/contract/services",
            contractService("four", "contract"),
          );
          await c.until(
            "watch resumed after the relist",
            (s) => names(s, "Service").includes("contract/four"),
          );
          for (const s of c.seen.slice(before)) {
            assert(names(s, "Service").includes("contract/one"));
          }
        },
      );
    } finally {
      await source.stop();
    }

    await t.step("node role: only this node's Pods", async () => {
      const pod = (name: string, nodeName: string) => ({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name, namespace: "contract" },
        spec: { nodeName, containers: [{ name: "c", image: "example.invalid/c" }] },
      });
      // No controller-manager here: the namespace's default ServiceAccount is made by hand.
      await must(kube, "POST", "/api/v1/namespaces/contract/serviceaccounts", {
        metadata: { name: "default" },
      });
      await must(kube, "POST", "/api/v1/namespaces/contract/pods", pod("mine", "node-a"));
      await must(kube, "POST", "/api/v1/namespaces/contract/pods", pod("theirs", "node-b"));
      const node = new KubeSource({
        client,
        kinds: ["Pod", "Service"],
        nodeName: "node-a",
        logger: quiet,
        backoff,
      });
      const n = collector();
      await node.start(n.push);
      try {
        assertEquals(names(n.seen[0], "Pod"), ["contract/mine"]);
        await must(kube, "POST", "/api/v1/namespaces/contract/pods", pod("mine-2", "node-a"));
        await must(kube, "POST", "/api/v1/namespaces/contract/pods", pod("theirs-2", "node-b"));
        await n.until("second pod of node-a", (s) => names(s, "Pod").length === 2);
        assertEquals(names(n.seen[n.seen.length - 1], "Pod"), ["contract/mine", "contract/mine-2"]);

        // A status update of what aether does not keep (conditions) is no change: the Pod stays
        // the very object it was; a label after it (same watch, later event) is one.
        const mine = (s: SourceRevision) =>
          s.objects.find((o) => o.kind === "Pod" && o.metadata.name === "mine")!;
        const before = mine(n.seen[n.seen.length - 1]);
        await must(kube, "PATCH", "/api/v1/namespaces/contract/pods/mine/status", {
          status: { conditions: [{ type: "Ready", status: "True" }] },
        });
        await must(kube, "PATCH", "/api/v1/namespaces/contract/pods/mine-2", {
          metadata: { labels: { seen: "yes" } },
        });
        const after = await n.until(
          "mine-2's label",
          (s) => s.objects.some((o) => o.metadata.labels?.seen === "yes"),
        );
        assert(mine(after) === before, "a conditions-only update left the Pod as it was");
      } finally {
        await node.stop();
      }
    });
    client.close();
  });
});
