/**
 * The node proxy on real Envoy 1.40: one Envoy (delta ADS, onDemand wired to NodeSnapshots)
 * serves two pods in two network namespaces (namespaces "a" and "b") on 127.0.0.1:18081 each.
 * svc-1's producer route splits 90/10 to svc-1-v2; namespace a's consumer route sends all to
 * svc-1-v2. Cold services are fetched with on-demand VHDS on their first request; config_dump
 * holds only the dependency set. svc-4's second endpoint refuses connections: the mesh's retry
 * floor sends those requests to the other.
 */
import assert from "node:assert/strict";
import type { MeshIR, MeshService } from "../../lib/ir/mod.ts";
import type { IRCluster, IRRoute } from "../../lib/ir/mod.ts";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { run } from "../../testbed/peers/mod.ts";
import { configDump } from "../xds/server/_test_utils.ts";
import { startNodeProxy } from "./_envoy_test_utils.ts";
import { freePort } from "../../testbed/free_port.ts";

const D = "aether.internal";

function service(name: string, routes: IRRoute[] = [], consumer = {}): MeshService {
  const authority = `${name}.${D}`;
  return {
    authority,
    namespace: "prod",
    name,
    vips: [],
    ports: [{
      port: 80,
      cluster: authority,
      domains: [`${authority}:80`, authority],
      producerRoutes: routes,
      consumerRoutes: consumer,
    }],
  };
}

function all(name: string, backends: [string, number][]): IRRoute {
  return {
    name,
    match: { path: { type: "PathPrefix", value: "/" }, headers: [], queryParams: [] },
    action: {
      kind: "forward",
      backends: backends.map(([svc, weight]) => ({ cluster: `${svc}.${D}`, weight })),
      mirrors: [],
    },
  };
}

function mesh(ports: Record<string, number>, dead: number): MeshIR {
  const split = all("HTTPRoute/prod/split/rule/0/match/0", [["svc-1", 90], ["svc-1-v2", 10]]);
  const pin = all("HTTPRoute/a/pin/rule/0/match/0", [["svc-1-v2", 1]]);
  const services = [
    service("svc-1", [split], { a: [pin] }),
    service("svc-1-v2"),
    service("svc-3"),
    service("svc-4"),
  ].sort((x, y) => x.authority < y.authority ? -1 : 1);
  const clusters: IRCluster[] = services.map((s) => ({
    name: s.authority,
    service: `prod/${s.name}`,
    port: 80,
    protocol: "http1",
    endpoints: [
      { address: "127.0.0.1", port: ports[s.name] },
      // Nothing listens there: connection refused.
      ...s.name === "svc-4" ? [{ address: "127.0.0.1", port: dead }] : [],
    ],
  }));
  return { services, clusters: clusters.sort((x, y) => x.name < y.name ? -1 : 1) };
}

/** `n` GETs from inside netns `ns` with `Host: host`; each line is `<status> <body>`. */
async function curlFrom(ns: string, host: string, n: number): Promise<string[]> {
  const [ip, curl] = [await ensurePeer("ip"), await ensurePeer("curl")];
  const url = n === 1 ? "http://127.0.0.1:18081/x" : `http://127.0.0.1:18081/x?i=[1-${n}]`;
  const out = await run(ip, [
    "netns",
    "exec",
    ns,
    curl,
    "-s",
    "--max-time",
    "10",
    "-H",
    `Host: ${host}`,
    url,
    "-w",
    " %{http_code}\\n",
  ]);
  return out.trim().split("\n").map((l) => {
    const i = l.lastIndexOf(" ");
    return `${l.slice(i + 1)} ${l.slice(0, i)}`.trim();
  });
}

function count(lines: string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) out[l] = (out[l] ?? 0) + 1;
  return out;
}

/** Names of the dynamic (xDS) clusters in Envoy's config_dump. */
async function dumpedClusters(adminUrl: string): Promise<string[]> {
  const dump = await configDump(adminUrl);
  const configs = dump.configs as Record<string, unknown>[];
  const cds = configs.find((c) => String(c["@type"]).endsWith("ClustersConfigDump"))!;
  const active = (cds.dynamic_active_clusters ?? []) as { cluster: { name: string } }[];
  return active.map((c) => c.cluster.name).sort();
}

Deno.test({
  name: "node proxy on real Envoy: per-pod netns listeners, consumer vs producer routes, VHDS",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    const dead = freePort();
    const proxy = await startNodeProxy({
      backends: ["svc-1", "svc-1-v2", "svc-3", "svc-4"],
      mesh: (ports) => mesh(ports, dead),
      dependencies: [`svc-1.${D}`],
    });
    const { nsA, nsB, server, adminUrl, asked } = proxy;
    try {
      assert.equal(server.lastNack("node-1"), undefined);
      // Only the dependency set: svc-1 and the backend its route reaches.
      assert.deepEqual(await dumpedClusters(adminUrl), [`svc-1-v2.${D}`, `svc-1.${D}`]);

      // Namespace a: the consumer route (all to svc-1-v2).
      const fromA = count(await curlFrom(nsA, `svc-1.${D}`, 200));
      assert.deepEqual(fromA, { "200 backend svc-1-v2 /x": 200 });
      // Namespace b: the producer's 90/10 split.
      const fromB = count(await curlFrom(nsB, `svc-1.${D}`, 400));
      const v1 = fromB["200 backend svc-1 /x"] ?? 0;
      const v2 = fromB["200 backend svc-1-v2 /x"] ?? 0;
      assert.equal(v1 + v2, 400, JSON.stringify(fromB));
      assert.ok(v2 >= 16 && v2 <= 64, `~10% to svc-1-v2 (got ${v2}/400)`);

      // A cold service: the first request succeeds through on-demand VHDS.
      assert.deepEqual(await curlFrom(nsB, `svc-3.${D}`, 1), ["200 backend svc-3 /x"]);
      // An explicit first port (the VHDS alias keeps the port) and an unknown service (404 at once).
      assert.deepEqual(await curlFrom(nsA, `svc-4.${D}:80`, 1), ["200 backend svc-4 /x"]);
      // The 404 follows the server's reply to Envoy's on-demand ask for `nope` (the ask is checked
      // in `asked` below); a request left waiting ends at curl's 10 s cap without a status.
      const [unknown] = await curlFrom(nsB, `nope.${D}`, 1);
      assert.match(unknown, /^404/);
      assert.deepEqual(await dumpedClusters(adminUrl), [
        `svc-1-v2.${D}`,
        `svc-1.${D}`,
        `svc-3.${D}`,
        `svc-4.${D}`,
      ]);
      assert.equal(server.lastNack("node-1"), undefined);
      // The retry floor: requests round-robined to svc-4's refusing endpoint go to the other.
      assert.deepEqual(count(await curlFrom(nsA, `svc-4.${D}`, 40)), {
        "200 backend svc-4 /x": 40,
      });
      // Each came through Envoy's on-demand VHDS (`<route config>/<host>` on the VHDS stream).
      assert.deepEqual(asked.sort(), [
        `outbound.a/svc-4.${D}:80`,
        `outbound.b/nope.${D}`,
        `outbound.b/svc-3.${D}`,
      ]);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nenvoy log:\n${proxy.envoyLogs()}`);
    } finally {
      await proxy.close();
    }
  },
});
