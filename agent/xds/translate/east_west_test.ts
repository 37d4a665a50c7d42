import assert from "node:assert/strict";
import { join } from "node:path";
import { checkGolden, goldenYaml } from "../../../testbed/golden.ts";
import { Snapshot } from "../cache/mod.ts";
import { clustersetSni, vipServiceName } from "../../../lib/mcs/mod.ts";
import { EAST_WEST_LISTENER, translateEastWest } from "./east_west.ts";
import { loadAssignment } from "./endpoint.ts";

const dir = join(import.meta.dirname!, "testdata", "east_west");

const ep = (service: string, pod: string, ip: string, ports: unknown[]) =>
  JSON.stringify({ cluster: "b.eu", namespace: "shop", service, pod, ip, ports });

/** Cluster b's origin: web (two pods, port http 80 → 8080, one named by its export only), db. */
const entries = () =>
  new Map([
    [
      "exports/shop/web",
      JSON.stringify({
        cluster: "b.eu",
        namespace: "shop",
        name: "web",
        exportCreated: "2026-01-01T00:00:00Z",
        type: "ClusterSetIP",
        sessionAffinity: "None",
        ipFamilies: ["IPv4"],
        labels: {},
        annotations: {},
        ports: [{ name: "http", protocol: "TCP", port: 80 }],
      }),
    ],
    [
      "eps/shop/web/web-1",
      ep("web", "web-1", "10.2.0.6", [{
        name: "http",
        protocol: "TCP",
        port: 8080,
        servicePort: 80,
      }]),
    ],
    [
      "eps/shop/web/web-0",
      ep("web", "web-0", "10.2.0.5", [{ name: "http", protocol: "TCP", port: 8080 }]),
    ],
    [
      "eps/shop/db/db-0",
      ep("db", "db-0", "10.2.0.9", [
        { name: "sql", protocol: "TCP", port: 5432, servicePort: 5432 },
        { name: "dns", protocol: "UDP", port: 53, servicePort: 53 },
      ]),
    ],
    ["eps/shop/db/broken", "{"],
  ]);

Deno.test("east-west translate: one SNI chain per exported port → its pods at :15008 (golden)", () => {
  const got = translateEastWest(entries(), {
    address: "0.0.0.0",
    port: 15443,
    meshDomain: "aether.internal",
  });
  assert.equal(got.skipped, 1);
  assert.deepEqual(got.routes, {
    [clustersetSni("shop", "db", 5432)]: ["10.2.0.9"],
    [clustersetSni("shop", "web", 80)]: ["10.2.0.5", "10.2.0.6"],
  });
  assert.equal(clustersetSni("shop", "web", 80), "80.web.shop.svc.clusterset.local");
  // deno-lint-ignore no-explicit-any
  const web = (got.resources.listeners[0].resource as any).filter_chains[1];
  assert.deepEqual(web.filter_chain_match.server_names, [
    "80.web.shop.svc.clusterset.local",
    `80.${vipServiceName("shop", "web")}.aether.internal`,
  ]);
  // Envoy's protos take every resource (a typo'd field would throw here).
  Snapshot.fromResources(got.resources);
  checkGolden(
    join(dir, "gateway.out.yaml"),
    goldenYaml(got.resources),
    "UPDATE_GOLDEN=1 deno test -A agent/xds/translate/east_west_test.ts",
  );
});

Deno.test("east-west translate: the listener passes TLS through unopened; nothing else is served", () => {
  const { resources } = translateEastWest(entries(), { address: "192.0.2.7", port: 15443 });
  assert.equal(resources.listeners.length, 1);
  // deno-lint-ignore no-explicit-any
  const l = resources.listeners[0].resource as any;
  assert.equal(l.name, EAST_WEST_LISTENER);
  assert.equal(l.listener_filters[0].name, "envoy.filters.listener.tls_inspector");
  for (const c of l.filter_chains) {
    assert.equal(c.transport_socket, undefined, "the gateway never terminates TLS");
    assert.equal(c.filters.length, 1);
    assert.equal(c.filters[0].name, "envoy.filters.network.tcp_proxy");
  }
  assert.equal(l.default_filter_chain, undefined, "an unknown SNI matches nothing: closed");
  // deno-lint-ignore no-explicit-any
  const eps = resources.endpoints.map((e) => (e.resource as any).endpoints[0].lb_endpoints);
  for (const list of eps) {
    for (const e of list) assert.equal(e.endpoint.address.socket_address.port_value, 15008);
  }
  // No exported ports: no listener (Envoy takes none without a chain), no cluster.
  const none = translateEastWest(new Map(), { address: "0.0.0.0", port: 15443 }).resources;
  assert.deepEqual(none.listeners, []);
  assert.deepEqual(none.clusters, []);
});

Deno.test("east-west endpoints: dialAt is dialled, identity-tagged and weighted; others at :15008", () => {
  const web = "spiffe://b.example/ns/shop/sa/web";
  const gw = { address: "192.0.2.7", port: 15443 };
  const cla = loadAssignment(
    {
      name: "web.shop.svc.clusterset.local:80",
      port: 80,
      endpoints: [
        { address: "10.1.0.5", port: 8080, identity: "spiffe://a.example/ns/shop/sa/web" },
        { ...gw, identity: web, priority: 1, dialAt: gw, weight: 2 },
      ],
    } as Parameters<typeof loadAssignment>[0],
  );
  // deno-lint-ignore no-explicit-any
  const [own, remote] = (cla.resource as any).endpoints.map((g: any) => g.lb_endpoints[0]);
  assert.deepEqual(own.endpoint.address.socket_address, { address: "10.1.0.5", port_value: 15008 });
  assert.deepEqual(remote.endpoint.address.socket_address, {
    address: "192.0.2.7",
    port_value: 15443,
  });
  assert.equal(remote.load_balancing_weight.value, 2);
  assert.equal(
    remote.metadata.filter_metadata["envoy.transport_socket_match"].fields.identity.stringValue,
    web,
  );
});
