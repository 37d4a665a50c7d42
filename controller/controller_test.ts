/**
 * The controller against a real kube-apiserver with the Gateway API CRDs: status written with the
 * spec's conditions (GatewayClass, Gateway, HTTPRoute with Gateway and Service parents, another
 * controller's entry kept); lastTransitionTime unchanged when the status of a condition did not
 * change; exactly one PATCH per object whose status changed over 100 edits (counted by the API
 * server itself); two controllers, the leader killed: the other takes over and rewrites nothing.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { installCrds, type Kube, startKube } from "../e2e/peers/kube.ts";
import { waitFor } from "../e2e/peers/proc.ts";
import { type Controller, controllerDefaults, runController } from "./run.ts";

const GW = "/apis/gateway.networking.k8s.io/v1";
const ROUTES = `${GW}/namespaces/default/httproutes`;
// deno-lint-ignore no-explicit-any
type Any = any;

async function must(kube: Kube, method: string, path: string, body?: unknown): Promise<Any> {
  const res = await kube.request(method, path, body);
  assert(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Waits until `f` gives a truthy value (errors count as not yet). */
const until = <T>(what: string, f: () => Promise<T | undefined | false>, ms = 60_000) =>
  waitFor(what, async () => (await f()) || undefined, ms) as Promise<T>;

const cond = (conds: Any[] | undefined, type: string) => conds?.find((c) => c.type === type);

/** PATCHes of a resource's status subresource as the API server counted them. */
async function serverPatches(kube: Kube, resource: string): Promise<number> {
  const text = (await kube.request("GET", "/metrics")).json as string;
  let n = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    if (!line.includes(`resource="${resource}"`) || !line.includes('subresource="status"')) {
      continue;
    }
    if (!line.includes('verb="PATCH"')) continue;
    n += Number(line.split(" ").pop());
  }
  return n;
}

const route = (name: string, parentRefs: unknown[]) => ({
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "HTTPRoute",
  metadata: { name, namespace: "default" },
  spec: { parentRefs, hostnames: [`${name}.example.com`] },
});

Deno.test("controller: status, transition times, one PATCH per change, leader failover", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-controller-" });
  const kube = await startKube(dir);
  const controllers: Controller[] = [];
  const logs: string[] = [];
  const start = async (identity: string) => {
    const c = await runController({
      ...controllerDefaults,
      client: new KubeClient({ kubeconfig: kube.kubeconfig }),
      identity,
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 500,
      statusQps: 200,
      statusBurst: 200,
      logger: new Logger(identity, (l) => logs.push(l), "info"),
    });
    controllers.push(c);
    return c;
  };
  try {
    await installCrds(kube, join(await ensurePeer("gateway-api-crds"), "standard"));
    await must(kube, "POST", "/api/v1/namespaces", { metadata: { name: "aether-system" } });
    await must(kube, "POST", `${GW}/gatewayclasses`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "aether" },
      spec: { controllerName: "gateway.aether.io/edge" },
    });
    await must(kube, "POST", `${GW}/gatewayclasses`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "other" },
      spec: { controllerName: "example.com/other" },
    });
    for (const [name, cls] of [["gw", "aether"], ["foreign", "other"]]) {
      await must(kube, "POST", `${GW}/namespaces/default/gateways`, {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "Gateway",
        metadata: { name },
        spec: { gatewayClassName: cls, listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
      });
    }
    await must(kube, "POST", "/api/v1/namespaces/default/services", {
      metadata: { name: "web" },
      spec: { ports: [{ name: "http", port: 80 }] },
    });
    for (let i = 0; i < 100; i++) {
      await must(kube, "POST", ROUTES, route(`r${i}`, [{ name: "gw" }]));
    }
    await must(kube, "POST", ROUTES, route("shared", [{ name: "gw" }, { name: "foreign" }]));
    await must(kube, "POST", ROUTES, route("mesh", [{ group: "", kind: "Service", name: "web" }]));
    // The other controller's entry, written as that controller would.
    const otherEntry = {
      parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "foreign" },
      controllerName: "example.com/other",
      conditions: [{
        type: "Accepted",
        status: "True",
        reason: "Accepted",
        message: "theirs",
        observedGeneration: 1,
        lastTransitionTime: "2026-01-01T00:00:00Z",
      }],
    };
    await must(kube, "PATCH", `${ROUTES}/shared/status`, { status: { parents: [otherEntry] } });

    const a = await start("a");
    assertEquals(a.ready(), {
      ready: true,
      detail: "ready: every watched kind is in sync with the API server",
    });
    const get = (name: string) => must(kube, "GET", `${ROUTES}/${name}`);

    await t.step("status written with the spec's conditions", async () => {
      const gc = await until("GatewayClass accepted", async () => {
        const o = await must(kube, "GET", `${GW}/gatewayclasses/aether`);
        return cond(o.status?.conditions, "Accepted")?.status === "True" ? o : undefined;
      });
      const features = gc.status.supportedFeatures.map((f: Any) => f.name);
      assert(features.includes("HTTPRoute") && features.includes("TLSRoute"), features.join());
      // Only the standard channel is installed: TCPRoute and UDPRoute are not advertised.
      assert(!features.includes("TCPRoute") && !features.includes("UDPRoute"), features.join());
      assertEquals(cond(gc.status.conditions, "Accepted").observedGeneration, 1);
      // The count is asserted below; wait for it too (routes may be counted after the first write).
      const gw = await until("Gateway programmed with its 101 routes", async () => {
        const o = await must(kube, "GET", `${GW}/namespaces/default/gateways/gw`);
        return cond(o.status?.conditions, "Programmed")?.status === "True" &&
            o.status.listeners?.[0]?.attachedRoutes === 101
          ? o
          : undefined;
      });
      assertEquals(cond(gw.status.conditions, "Accepted").status, "True");
      assertEquals(gw.status.addresses, [{ type: "IPAddress", value: "127.0.0.1" }]);
      assertEquals(gw.status.listeners[0].name, "http");
      assertEquals(gw.status.listeners[0].attachedRoutes, 101);
      assertEquals(cond(gw.status.listeners[0].conditions, "ResolvedRefs").status, "True");
      // The other class's Gateway is not ours: no status from us.
      const foreign = await must(kube, "GET", `${GW}/namespaces/default/gateways/foreign`);
      assertEquals(cond(foreign.status?.conditions, "Programmed")?.reason, "Pending");
      for (const name of ["r0", "r99"]) {
        const r = await until(`${name} accepted`, async () => {
          const o = await get(name);
          return o.status?.parents?.length ? o : undefined;
        });
        assertEquals(r.status.parents.length, 1);
        assertEquals(r.status.parents[0].controllerName, "gateway.aether.io/edge");
        assertEquals(cond(r.status.parents[0].conditions, "Accepted").status, "True");
        assertEquals(cond(r.status.parents[0].conditions, "ResolvedRefs").observedGeneration, 1);
      }
      const shared = await until("shared has our entry", async () => {
        const o = await get("shared");
        return o.status?.parents?.length === 2 ? o : undefined;
      });
      assertEquals(
        shared.status.parents.map((p: Any) => p.controllerName).sort(),
        ["example.com/other", "gateway.aether.io/edge"],
      );
      assertEquals(
        shared.status.parents.find((p: Any) => p.controllerName === "example.com/other"),
        otherEntry,
      );
      const mesh = await until("mesh route status", async () => {
        const o = await get("mesh");
        return o.status?.parents?.length ? o : undefined;
      });
      assertEquals(mesh.status.parents[0].controllerName, "gateway.aether.io/mesh");
      assertEquals(mesh.status.parents[0].parentRef.kind, "Service");
      assertEquals(cond(mesh.status.parents[0].conditions, "Accepted").status, "True");
    });

    await t.step("lastTransitionTime unchanged when only the generation moved", async () => {
      const before = (await get("r0")).status.parents[0].conditions;
      await new Promise((r) => setTimeout(r, 1100)); // a new stamp would differ by a second
      await must(kube, "PATCH", `${ROUTES}/r0`, { spec: { hostnames: ["r0b.example.com"] } });
      const after = await until("r0 observedGeneration 2", async () => {
        const c = (await get("r0")).status.parents[0].conditions;
        return cond(c, "Accepted").observedGeneration === 2 ? c : undefined;
      });
      for (const type of ["Accepted", "ResolvedRefs"]) {
        assertEquals(cond(after, type).lastTransitionTime, cond(before, type).lastTransitionTime);
      }
      // A status change moves it: the route loses its parent listener.
      await must(kube, "PATCH", `${ROUTES}/r0`, {
        spec: { parentRefs: [{ name: "gw", sectionName: "nope" }] },
      });
      const moved = await until("r0 not accepted", async () => {
        const p = (await get("r0")).status.parents;
        return p.length === 1 && p[0].parentRef.sectionName === "nope"
          ? p[0].conditions
          : undefined;
      });
      assertEquals(cond(moved, "Accepted").status, "False");
      await must(kube, "PATCH", `${ROUTES}/r0`, { spec: { parentRefs: [{ name: "gw" }] } });
    });

    await t.step("100 edits: one PATCH per object whose status changed", async () => {
      await until(
        "r0 back",
        async () => (await get("r0")).status.parents[0].parentRef.sectionName === undefined,
      );
      const patchesBefore = await serverPatches(kube, "httproutes");
      for (let i = 1; i <= 50; i++) {
        // Spec edit: generation 2 → observedGeneration changes in the status.
        await must(kube, "PATCH", `${ROUTES}/r${i}`, {
          spec: { hostnames: [`r${i}b.example.com`] },
        });
      }
      for (let i = 51; i <= 100; i++) {
        // Label edit on another route: no generation change, no status change.
        await must(kube, "PATCH", `${ROUTES}/r${i % 100}`, {
          metadata: { labels: { edit: `${i}` } },
        });
      }
      // A last spec edit: once its status is written, every earlier event was planned.
      await must(kube, "PATCH", `${ROUTES}/r99`, { spec: { hostnames: ["sentinel.example.com"] } });
      await until(
        "sentinel written",
        async () =>
          cond((await get("r99")).status.parents[0].conditions, "Accepted").observedGeneration ===
            2,
      );
      for (let i = 1; i <= 50; i++) {
        const c = (await get(`r${i}`)).status.parents[0].conditions;
        assertEquals(cond(c, "Accepted").observedGeneration, 2, `r${i}`);
      }
      await new Promise((r) => setTimeout(r, 1000));
      assertEquals(await serverPatches(kube, "httproutes") - patchesBefore, 51);
    });

    await t.step(
      "two controllers: the leader killed, the other takes over, nothing rewritten",
      async () => {
        const b = await start("b");
        await new Promise((r) => setTimeout(r, 1500));
        assertEquals([a.elector.isLeader, b.elector.isLeader], [true, false]);
        const patches = async () =>
          await serverPatches(kube, "httproutes") + await serverPatches(kube, "gateways") +
          await serverPatches(kube, "gatewayclasses");
        const before = await patches();
        const lease = async () =>
          (await must(
            kube,
            "GET",
            "/apis/coordination.k8s.io/v1/namespaces/aether-system/leases/aether-controller",
          )).spec;
        const held = await lease();
        assertEquals(held.holderIdentity, "a");
        const killed = Date.now();
        await a.close({ abandon: true }); // like a crash: the Lease is not released
        const lastRenewOfA = Date.parse((await lease()).renewTime);
        await until("b leads", () => Promise.resolve(b.elector.isLeader || undefined));
        const tookOverMs = Date.now() - killed;
        const now = await lease();
        assertEquals(now.holderIdentity, "b");
        assertEquals(now.leaseTransitions, held.leaseTransitions + 1);
        // Safety: b did not take the Lease before a's term had run out.
        assert(
          Date.parse(now.acquireTime) >= lastRenewOfA + 4000,
          JSON.stringify({ now, lastRenewOfA }),
        );
        // b plans against what a wrote: nothing to rewrite. One edit, one write.
        await must(kube, "PATCH", `${ROUTES}/r7`, {
          spec: { hostnames: ["after-failover.example.com"] },
        });
        await until(
          "b wrote r7",
          async () =>
            cond((await get("r7")).status.parents[0].conditions, "Accepted").observedGeneration ===
              3,
        );
        await new Promise((r) => setTimeout(r, 1000));
        assertEquals(await patches() - before, 1, "b wrote only the edited route");
        console.error(
          `leader failover: b led ${tookOverMs} ms after a was killed (lease 4 s, retry 0.5 s)`,
        );
      },
    );
  } catch (e) {
    console.error(logs.filter((l) => !l.includes('"level":"debug"')).slice(-40).join("\n"));
    throw e;
  } finally {
    for (const c of controllers) await c.close({ abandon: true }).catch(() => {});
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
