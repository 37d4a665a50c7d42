/**
 * Routes hold from the very first request on real Envoy 1.40: every service starts cold (an empty
 * dependency set), and the first request to each is routed by its GAMMA routes (on-demand VHDS),
 * not sent to the service's own endpoints. Also: 404 for what a routed service's rules do not
 * match, pass-through for a service without routes, a fast 404 for an unknown host, config_dump
 * holding only the set, and no push for a route change outside the set.
 */
import assert from "node:assert/strict";
import type { MeshIR, MeshService } from "../../lib/ir/mod.ts";
import type { IRRoute, IRRouteMatch } from "../../lib/ir/mod.ts";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { run } from "../../testbed/peers/mod.ts";
import { TypeUrl } from "../xds/proto.ts";
import { configDump, waitFor } from "../xds/server/_test_utils.ts";
import { startNodeProxy } from "./_envoy_test_utils.ts";

const D = "aether.internal";
const BACKENDS = [
  "web",
  "web-admin",
  "form",
  "form-canary",
  "api",
  "shop",
  "shop-v2",
  "plain",
  "far",
];

/** A forward route: `match` (path prefix and headers) → one backend service. */
function to(name: string, prefix: string, backend: string, header?: [string, string]): IRRoute {
  const match: IRRouteMatch = {
    path: { type: "PathPrefix", value: prefix },
    headers: header ? [{ type: "Exact", name: header[0], value: header[1] }] : [],
    queryParams: [],
  };
  return {
    name,
    match,
    action: { kind: "forward", backends: [{ cluster: `${backend}.${D}`, weight: 1 }], mirrors: [] },
  };
}

/** The mesh: every backend a service; `routes` per service (producer), `consumer` per service. */
function mesh(
  ports: Record<string, number>,
  routes: Record<string, IRRoute[]>,
  consumer: Record<string, Record<string, IRRoute[]>> = {},
): MeshIR {
  const services: MeshService[] = [...BACKENDS].sort().map((name) => ({
    authority: `${name}.${D}`,
    namespace: "prod",
    name,
    vips: [],
    ports: [{
      port: 80,
      cluster: `${name}.${D}`,
      domains: [`${name}.${D}:80`, `${name}.${D}`],
      producerRoutes: routes[name] ?? [],
      consumerRoutes: consumer[name] ?? {},
    }],
  }));
  const clusters = services.map((s) => ({
    name: s.authority,
    service: `prod/${s.name}`,
    port: 80,
    protocol: "http1" as const,
    endpoints: [{ address: "127.0.0.1", port: ports[s.name] }],
  }));
  return { services, clusters };
}

const producer = {
  web: [
    to("HTTPRoute/prod/web/rule/0", "/admin", "web-admin"),
    to("HTTPRoute/prod/web/rule/1", "/", "web"),
  ],
  form: [
    to("HTTPRoute/prod/form/rule/0", "/", "form-canary", ["x-canary", "yes"]),
    to("HTTPRoute/prod/form/rule/1", "/", "form"),
  ],
  api: [to("HTTPRoute/prod/api/rule/0", "/v1", "api")],
  far: [to("HTTPRoute/prod/far/rule/0", "/x", "far")],
};
const consumer = { shop: { a: [to("HTTPRoute/a/shop/rule/0", "/", "shop-v2")] } };

/** One request from inside netns `ns`: `<status> <body>` and curl's total time in ms. */
async function call(
  ns: string,
  host: string,
  path: string,
  extra: string[] = [],
): Promise<{ line: string; ms: number }> {
  const [ip, curl] = [await ensurePeer("ip"), await ensurePeer("curl")];
  const out = await run(ip, [
    ...["netns", "exec", ns, curl, "-s", "--max-time", "10", "-H", `Host: ${host}`, ...extra],
    ...[`http://127.0.0.1:18081${path}`, "-w", "\\n%{http_code} %{time_total}"],
  ]);
  const lines = out.split("\n");
  const [code, secs] = lines.pop()!.split(" ");
  return { line: `${code} ${lines.join("\n")}`.trim(), ms: Math.round(Number(secs) * 1000) };
}

type Obj = Record<string, unknown>;

/** Dynamic clusters and, per route configuration, its (VHDS) virtual hosts, from config_dump. */
async function dumped(adminUrl: string): Promise<{ clusters: string[]; vhosts: string[] }> {
  const configs = (await configDump(adminUrl)).configs as Obj[];
  const of = (kind: string) => configs.find((c) => String(c["@type"]).endsWith(`.${kind}`))!;
  const active = (of("ClustersConfigDump").dynamic_active_clusters ?? []) as Obj[];
  const rcs = (of("RoutesConfigDump").dynamic_route_configs ?? []) as Obj[];
  return {
    clusters: active.map((c) => (c.cluster as Obj).name as string).sort(),
    vhosts: rcs.flatMap((rc) =>
      (((rc.route_config as Obj).virtual_hosts ?? []) as Obj[]).map((v) => v.name as string)
    ).sort(),
  };
}

Deno.test({
  name: "node proxy on real Envoy: the first request to a cold service obeys its routes",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const proxy = await startNodeProxy({
      backends: BACKENDS,
      mesh: (ports) => mesh(ports, producer, consumer),
      dependencies: [],
    });
    const { nsA, nsB, ports, snapshots, server, metrics, adminUrl } = proxy;
    const pushes = (t: string) =>
      metrics.counter("aether_xds_pushes_total", "").get({ type_url: t }) ?? 0;
    try {
      assert.deepEqual(await dumped(adminUrl), { clusters: [], vhosts: [] }, "all cold");

      const timings: Record<string, number> = {};
      const first = async (key: string, ns: string, host: string, path: string, x?: string[]) => {
        const { line, ms } = await call(ns, `${host}.${D}`, path, x);
        timings[key] = ms;
        return line;
      };
      // Path match, first request: /admin goes to web-admin, not to web's endpoints.
      assert.equal(await first("path", nsB, "web", "/admin/x"), "200 backend web-admin /admin/x");
      // Header match on a POST with a body, first request.
      const post = ["-X", "POST", "-d", "hello", "-H", "x-canary: yes"];
      assert.equal(await first("post", nsA, "form", "/f", post), "200 backend form-canary /f");
      // A consumer route in the caller's namespace, first request; b has none: pass-through.
      assert.equal(await first("consumer", nsA, "shop", "/s"), "200 backend shop-v2 /s");
      assert.equal((await call(nsB, `shop.${D}`, "/s")).line, "200 backend shop /s");
      // A routed service: what no rule matches is 404, even as the first (cold) request.
      assert.match(await first("unmatched", nsB, "api", "/nope"), /^404\b/);
      assert.equal((await call(nsB, `api.${D}`, "/v1/x")).line, "200 backend api /v1/x");
      // No route: pass-through for any path, first request included.
      assert.equal(await first("plain", nsA, "plain", "/any/path"), "200 backend plain /any/path");
      assert.equal((await call(nsB, `plain.${D}`, "/z")).line, "200 backend plain /z");
      // An unknown host: 404 at once.
      assert.match(await first("unknown", nsB, "nope", "/"), /^404\b/);
      assert.ok(timings.unknown < 3000, `unknown host answered in ${timings.unknown} ms`);
      console.log("first-request timings (curl time_total, ms):", JSON.stringify(timings));

      // Only the dependency set: what was asked for and what its routes reach; never `far`.
      const set = ["api", "form", "form-canary", "plain", "shop", "shop-v2", "web", "web-admin"];
      const got = await dumped(adminUrl);
      assert.deepEqual(got.clusters, set.map((n) => `${n}.${D}`).sort());
      const vhosts = ["a", "b"].flatMap((ns) => set.map((n) => `outbound.${ns}/${n}.${D}`));
      assert.deepEqual(got.vhosts, vhosts.sort());
      assert.equal(server.lastNack("node-1"), undefined);

      // A producer-route change on `far` (outside the set): nothing recomputed, nothing pushed.
      const types = [TypeUrl.listener, TypeUrl.route, TypeUrl.cluster, TypeUrl.virtualHost];
      const before = types.map(pushes);
      const farMoved = { ...producer, far: [to("HTTPRoute/prod/far/rule/0", "/y", "far")] };
      assert.deepEqual(snapshots.setMesh(mesh(ports, farMoved, consumer)), []);
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(types.map(pushes), before);
      // One on `web` (in the set, same backends): one VHDS push (no LDS, RDS or CDS), applied.
      const webMoved = {
        ...farMoved,
        web: [to("HTTPRoute/prod/web/rule/0", "/manage", "web-admin"), producer.web[1]],
      };
      webMoved.web[1] = to("HTTPRoute/prod/web/rule/1", "/home", "web");
      assert.deepEqual(snapshots.setMesh(mesh(ports, webMoved, consumer)), ["node-1"]);
      await waitFor("the new vhost ACKed", () => server.isReady("node-1"));
      assert.deepEqual(types.map(pushes), [...before.slice(0, 3), before[3] + 1]);
      assert.equal((await call(nsB, `web.${D}`, "/manage")).line, "200 backend web-admin /manage");
      assert.match((await call(nsB, `web.${D}`, "/admin")).line, /^404\b/, "now unmatched");
    } catch (e) {
      throw new Error(`${(e as Error).message}\nenvoy log:\n${proxy.envoyLogs()}`);
    } finally {
      await proxy.close();
    }
  },
});
