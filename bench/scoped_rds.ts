/**
 * A layout probe for issue 21's 10k edit aim: the same routes (aether's translation of the
 * synthetic config: `routes` hosts over 1,000 Services) given to a real Envoy either as one
 * RouteConfiguration holding every virtual host (`rds`: what any edit makes Envoy rebuild, as
 * VHDS does) or as scoped RDS (`scoped`: a ScopedRouteConfiguration per host keyed by the
 * `:authority` before any port, each scope with its own one-host RouteConfiguration). Each edit
 * changes one route's header value (with `add`, adds a new host) and is timed from the apply until
 * a request through Envoy sees it. The resources come from the edge's own engine; the delta ADS
 * server here is a minimal one of this probe (the agent's does not serve SRDS), so the figures are
 * Envoy's side of a layout aether does not ship yet.
 *
 *   deno run -A bench/scoped_rds.ts <rds|scoped> [routes=10000] [edits=40] [add]
 *
 * Prints one JSON line: edit → served percentiles, time to the first 200, Envoy's allocated heap
 * and the status of a request whose Host is in upper case.
 * @module
 */
import * as grpc from "@grpc/grpc-js";
import http from "node:http";
import { Engine } from "../lib/engine/mod.ts";
import { SnapshotCache } from "../agent/xds/cache/mod.ts";
import { EdgeSnapshots } from "../agent/xds/edge_snapshots.ts";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { encodeResource, TypeUrl } from "../agent/xds/proto.ts";
import {
  adsService,
  type DeltaDiscoveryRequest,
  type DeltaDiscoveryResponse,
  envoyBootstrap,
} from "../agent/xds/server/mod.ts";
import { syntheticConfig, syntheticRoute } from "../testbed/fixtures/synthetic_config.ts";
import { startEcho } from "../e2e/echo/server.ts";
import { freePort, request } from "../e2e/http_client.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";

type R = Record<string, unknown>;
type Writer = { subs: Map<string, Set<string> | "*">; write: (r: DeltaDiscoveryResponse) => void };

const mode = Deno.args[0] === "rds" ? "rds" : "scoped";
const routes = Number(Deno.args[1] ?? 10000);
const edits = Number(Deno.args[2] ?? 40);
const add = Deno.args[3] === "add";
const services = 1000;
const SRDS = "type.googleapis.com/envoy.config.route.v3.ScopedRouteConfiguration";
const ads = { ads: {}, resource_api_version: 2 };

const echo = await startEcho("bench", "127.0.0.1", 0);
const port = freePort();
const cache = new SnapshotCache();
const engine = new Engine({
  logger: new Logger("bench", () => {}, "error"),
  metrics: new Registry(),
  sinks: [new EdgeSnapshots({ cache })],
});
let objects = syntheticConfig({ services, routes, port, endpointPort: echo.port });
const apply = (revision: number) => {
  engine.apply({ revision, objects, problems: [], origins: new Map() });
  if (engine.status.error) throw new Error(engine.status.error);
};
apply(0);
const firstRoute = objects.findIndex((o) => o.kind === "HTTPRoute");
const items = (t: string) => [...cache.getDefaultSnapshot()!.resources(t).items.values()];
const table = `http.${port}`;
const hostOf = (vhName: string) => vhName.slice(vhName.indexOf("/") + 1);
const { vhds: _vhds, ...tableBase } = items(TypeUrl.route)[0].resource;

/** The RouteConfigurations holding these virtual hosts, by name. */
function routeConfigs(vhs: R[]): Map<string, R> {
  if (mode === "rds") return new Map([[table, { ...tableBase, virtual_hosts: vhs }]]);
  return new Map(vhs.map((vh) => {
    const name = `h/${hostOf(vh.name as string)}`;
    return [name, { ...tableBase, name, virtual_hosts: [{ ...vh, domains: ["*"] }] }];
  }));
}
const scope = (host: string): [string, R] => [`s/${host}`, {
  name: `s/${host}`,
  route_configuration_name: `h/${host}`,
  key: { fragments: [{ string_key: host }] },
}];

const listener = structuredClone(items(TypeUrl.listener)[0].resource) as R & {
  filter_chains: { filters: { typed_config: R }[] }[];
};
if (mode === "scoped") {
  const hcm = listener.filter_chains[0].filters[0].typed_config;
  delete hcm.rds;
  hcm.scoped_routes = {
    name: "hosts",
    scope_key_builder: {
      fragments: [{
        header_value_extractor: { name: ":authority", element_separator: ":", index: 0 },
      }],
    },
    rds_config_source: ads,
    scoped_rds: { scoped_rds_config_source: ads },
  };
}
const allHosts = () => items(TypeUrl.virtualHost).map((x) => x.resource);
const state = new Map<string, Map<string, R>>([
  [TypeUrl.listener, new Map([[listener.name as string, listener]])],
  [TypeUrl.cluster, new Map(items(TypeUrl.cluster).map((x) => [x.name, x.resource]))],
  [TypeUrl.endpoint, new Map(items(TypeUrl.endpoint).map((x) => [x.name, x.resource]))],
  [TypeUrl.route, routeConfigs(allHosts())],
  [
    SRDS,
    new Map(mode === "scoped" ? allHosts().map((vh) => scope(hostOf(vh.name as string))) : []),
  ],
]);

let nonce = 0;
const streams = new Set<Writer>();
function send(st: Writer, t: string, names: readonly string[]): void {
  const m = state.get(t) ?? new Map<string, R>();
  const resources = names.filter((n) => m.has(n)).map((name) => ({
    name,
    version: String(++nonce),
    resource: { type_url: t, value: encodeResource(t, m.get(name)!) },
  }));
  if (!resources.length) return;
  st.write({
    system_version_info: String(nonce),
    resources,
    type_url: t,
    removed_resources: [],
    nonce: String(++nonce),
  });
}
function serve(call: grpc.ServerDuplexStream<DeltaDiscoveryRequest, DeltaDiscoveryResponse>) {
  const st: Writer = { subs: new Map(), write: (r) => call.write(r) };
  streams.add(st);
  call.on("data", (req: DeltaDiscoveryRequest) => {
    const t = req.type_url ?? "";
    if (req.error_detail?.message) {
      throw new Error(`Envoy NACKed ${t}: ${req.error_detail.message}`);
    }
    const sub = req.resource_names_subscribe ?? [];
    if (!st.subs.has(t) && (sub.length === 0 || sub.includes("*"))) {
      st.subs.set(t, "*");
      return send(st, t, [...(state.get(t)?.keys() ?? [])]);
    }
    const set = st.subs.get(t) ?? new Set<string>();
    st.subs.set(t, set);
    if (set !== "*") {
      for (const n of sub) set.add(n);
      for (const n of req.resource_names_unsubscribe ?? []) set.delete(n);
    }
    send(st, t, sub);
  });
  call.on("end", () => {
    streams.delete(st);
    call.end();
  });
  call.on("error", () => streams.delete(st));
}
const server = new grpc.Server({ "grpc.max_receive_message_length": 64 << 20 });
server.addService(adsService(), {
  StreamAggregatedResources: () => {},
  DeltaAggregatedResources: serve,
});
const xdsPort = await new Promise<number>((resolve, reject) =>
  server.bindAsync(
    "127.0.0.1:0",
    grpc.ServerCredentials.createInsecure(),
    (e, p) => e ? reject(e) : resolve(p),
  )
);

const dir = await Deno.makeTempDir({ prefix: "aether-bench-scoped-" });
const adminPort = freePort();
await Deno.writeTextFile(
  `${dir}/bootstrap.json`,
  JSON.stringify({
    ...envoyBootstrap({ nodeId: "bench", cluster: "bench", xdsPort, delta: true }),
    admin: { address: { socket_address: { address: "127.0.0.1", port_value: adminPort } } },
  }),
);
const envoy = new Deno.Command(await ensurePeer("envoy"), {
  args: ["-c", `${dir}/bootstrap.json`, "--concurrency", "2", "-l", "error"],
  stdout: "null",
  stderr: "inherit",
}).spawn();
const pool = new http.Agent({ keepAlive: true, maxSockets: 1 });
const get = (host: string) => request({ port, authority: host, path: "/", agent: pool });
const samples: number[] = [];
let readyMs = 0;
let allocatedMiB = 0;
let upperCaseHostStatus = 0;
try {
  const t0 = performance.now();
  while ((await get(`app-${routes - 1}.example.com`).catch(() => undefined))?.status !== 200) {
    if (performance.now() - t0 > 120_000) throw new Error("Envoy not serving after 120 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  readyMs = performance.now() - t0;
  for (let n = 1; n <= edits; n++) {
    const k = add ? routes + n - 1 : (n * 7919) % routes;
    const host = `app-${k}.example.com`;
    objects = add
      ? [...objects, syntheticRoute(k, services, n)]
      : objects.with(firstRoute + k, syntheticRoute(k, services, n));
    const started = performance.now();
    apply(n);
    const vh = cache.getDefaultSnapshot()!.resources(TypeUrl.virtualHost).items.get(
      `${table}/${host}`,
    )!.resource;
    // Clusters and endpoints a new route needs first (make before break).
    for (const t of [TypeUrl.cluster, TypeUrl.endpoint]) {
      const known = state.get(t)!;
      const fresh = items(t).filter((x) => known.get(x.name) !== x.resource);
      for (const x of fresh) known.set(x.name, x.resource);
      for (const st of streams) send(st, t, fresh.map((x) => x.name));
    }
    const changed = routeConfigs(mode === "rds" ? allHosts() : [vh]);
    for (const [name, rc] of changed) state.get(TypeUrl.route)!.set(name, rc);
    if (add && mode === "scoped") {
      // Envoy subscribes to the new scope's RouteConfiguration once it has the scope.
      state.get(SRDS)!.set(...scope(host));
      for (const st of streams) send(st, SRDS, [`s/${host}`]);
    } else for (const st of streams) send(st, TypeUrl.route, [...changed.keys()]);
    for (;;) {
      const r = await get(host);
      const seen = (r.json?.headers as Record<string, string> | undefined)?.["x-edit"];
      if (r.status === 200 && seen === String(n)) break;
      if (performance.now() - started > 20_000) throw new Error(`edit ${n} not served after 20 s`);
    }
    samples.push(performance.now() - started);
  }
  // Envoy matches a virtual host's domains whatever the case; a scope key is matched as sent.
  upperCaseHostStatus = (await get(`APP-0.EXAMPLE.COM`)).status;
  const memory = await (await fetch(`http://127.0.0.1:${adminPort}/memory`)).json();
  allocatedMiB = Number(memory.allocated) / 2 ** 20;
} finally {
  envoy.kill("SIGTERM");
  await envoy.status;
  pool.destroy();
  server.forceShutdown();
  await echo.close();
  await Deno.remove(dir, { recursive: true });
}
samples.sort((a, b) => a - b);
const pct = (p: number) =>
  +samples[Math.min(samples.length - 1, Math.floor((p / 100) * samples.length))].toFixed(1);
console.log(JSON.stringify({
  mode,
  change: add ? "add host" : "edit route",
  routes,
  edits,
  firstServedMs: Math.round(readyMs),
  p50Ms: pct(50),
  p90Ms: pct(90),
  p99Ms: pct(99),
  maxMs: pct(100),
  envoyAllocatedMiB: Math.round(allocatedMiB),
  upperCaseHostStatus,
  load: Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" "),
}));
