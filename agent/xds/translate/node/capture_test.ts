import assert from "node:assert/strict";
import {
  captureListenerName,
  captureProtocol,
  captureRouteName,
  captureTargets,
  PASSTHROUGH_CHAIN,
  PASSTHROUGH_CLUSTER,
  translateNode,
} from "./mod.ts";
import { canonicalIp, inspectorsDisabled } from "./capture_match.ts";
import { nodeGoldenCases } from "./_test_utils.ts";

type Obj = Record<string, unknown>;

function golden(name: string) {
  const c = nodeGoldenCases().find((x) => x.name === name)!;
  return { c, r: translateNode(c.mesh, c.view, c.options) };
}

/**
 * Walks a filter_chain_matcher like Envoy would for a connection: destination IP, port, then
 * (sniffed ports) transport and application protocol; returns the chain name.
 */
function pick(m: Obj, conn: { ip: string; port: number; transport?: string; alpn?: string }) {
  const inputs: Record<string, string> = {
    destination_ip: conn.ip,
    destination_port: String(conn.port),
    transport_protocol: conn.transport ?? "raw_buffer",
    application_protocol: conn.alpn ?? "",
  };
  let node: Obj = m;
  for (;;) {
    const tree = node.matcher_tree as Obj;
    const input = (tree.input as Obj).name as string;
    const hit = ((tree.exact_match_map as Obj).map as Record<string, Obj>)[inputs[input]];
    const next = hit ?? (node.on_no_match as Obj);
    if (next.action) return (next.action as Obj).name as string;
    node = next.matcher as Obj;
  }
}

Deno.test("captureProtocol: appProtocol picks HTTP or TCP, none is sniffed", () => {
  assert.equal(captureProtocol({}), "sniff");
  for (const p of ["http", "HTTP", "kubernetes.io/h2c", "grpc", "h2c"]) {
    assert.equal(captureProtocol({ appProtocol: p }), "http", p);
  }
  for (const p of ["tcp", "kubernetes.io/ws", "kubernetes.io/wss", "https", "redis", "mysql"]) {
    assert.equal(captureProtocol({ appProtocol: p }), "tcp", p);
  }
});

Deno.test("canonicalIp: the VIP text Envoy's destination IP input gives", () => {
  assert.equal(canonicalIp("10.96.0.10"), "10.96.0.10");
  assert.equal(canonicalIp("FD00:0096:0:0070:0:0:0:11"), "fd00:96:0:70::11");
  assert.equal(canonicalIp("1:0:0:2:0:0:0:3"), "1:0:0:2::3");
});

Deno.test("captureTargets: VIP services' TCP ports, the TCP one of two equal numbers", () => {
  const { c } = golden("capture");
  const got = captureTargets(c.mesh).map((t) => `${t.port.cluster} ${t.protocol}`);
  assert.deepEqual(got, [
    "dns.aether.internal:53 tcp",
    "echo-v1.aether.internal http",
    "echo-v2.aether.internal http",
    "echo.aether.internal http",
    "echo.aether.internal:7070 http",
    "plain.aether.internal sniff",
    "plain.aether.internal:9001 sniff",
    "redis.aether.internal tcp",
  ]);
});

Deno.test("capture listener: per pod in its netns, the dialled VIP:port picks the chain", () => {
  const { r } = golden("capture");
  for (const [pod, ns] of [["client-a", "a"], ["client-b", "b"]]) {
    const name = captureListenerName({ namespace: ns, name: pod });
    const l = r.listeners.find((x) => x.name === name)!.resource;
    const addr = (l.address as Obj).socket_address as Obj;
    assert.deepEqual(addr, {
      address: "127.0.0.1",
      port_value: 15001,
      network_namespace_filepath: `/var/run/netns/pod-${ns}`,
    });
    // plain has an IPv6 VIP: its connections are redirected to [::1]:15001.
    assert.deepEqual(l.additional_addresses, [{
      address: { socket_address: { ...addr, address: "::1" } },
    }]);
    assert.equal(l.continue_on_listener_filters_timeout, true);
    const m = l.filter_chain_matcher as Obj;
    // By address only: echo-v1's VIP is echo-v1's chain whatever the request's Host will be.
    assert.equal(pick(m, { ip: "10.96.0.11", port: 80 }), "echo-v1.aether.internal|http");
    assert.equal(pick(m, { ip: "10.96.0.12", port: 80 }), "echo-v2.aether.internal|http");
    assert.equal(pick(m, { ip: "10.96.0.10", port: 7070 }), "echo.aether.internal:7070|http");
    assert.equal(pick(m, { ip: "10.96.0.20", port: 6379 }), "redis.aether.internal|tcp");
    // Sniffed: plaintext HTTP or h2c → HTTP; other bytes, and TLS even with ALPN http/1.1 → TCP.
    const plain = { ip: "10.96.0.30", port: 9000 };
    assert.equal(pick(m, { ...plain, alpn: "'http/1.1'" }), "plain.aether.internal|http");
    assert.equal(pick(m, { ...plain, alpn: "'h2c'" }), "plain.aether.internal|http");
    assert.equal(
      pick(m, { ...plain, ip: "fd00::30", alpn: "'h2c'" }),
      "plain.aether.internal|http",
    );
    assert.equal(pick(m, plain), "plain.aether.internal|tcp");
    assert.equal(
      pick(m, { ...plain, transport: "tls", alpn: "'http/1.1'" }),
      "plain.aether.internal|tcp",
    );
    // No captured VIP:port: a pod IP, an outside address, a VIP's other port.
    for (const conn of [{ ip: "10.0.0.11", port: 8080 }, { ip: "10.96.0.11", port: 81 }]) {
      assert.equal(pick(m, conn), PASSTHROUGH_CHAIN);
    }
    const names = (l.filter_chains as Obj[]).map((x) => x.name);
    assert.ok(names.includes(PASSTHROUGH_CHAIN));
    const passthrough = (l.filter_chains as Obj[]).find((x) => x.name === PASSTHROUGH_CHAIN)!;
    const proxy = (passthrough.filters as Obj[])[0].typed_config as Obj;
    assert.equal(proxy.cluster, PASSTHROUGH_CLUSTER);
    // Every chain the matcher can name exists.
    const named = JSON.stringify(m).match(/"value":"[^"]+"/g)!.map((s) => s.slice(9, -1));
    for (const n of named) assert.ok(names.includes(n), n);
  }
  const passthrough = r.clusters.find((x) => x.name === PASSTHROUGH_CLUSTER)!.resource;
  assert.equal(passthrough.type, 4, "ORIGINAL_DST");
});

Deno.test("capture route tables: per (caller, HTTP port), one vhost `*`, its routes", () => {
  const { r } = golden("capture");
  const routesOf = (caller: string, cluster: string) => {
    const rc = r.routes.find((x) => x.name === captureRouteName(caller, cluster))!.resource;
    const [vh] = rc.virtual_hosts as Obj[];
    assert.deepEqual(vh.domains, ["*"]);
    return (vh.routes as Obj[]).map((x) => x.name);
  };
  // Namespace a's consumer route replaces the producer split; b gets the producer's.
  assert.deepEqual(routesOf("a", "echo.aether.internal"), [
    "HTTPRoute/a/pin/rule/0/match/0",
    "echo.aether.internal/not-found",
  ]);
  assert.deepEqual(routesOf("b", "echo.aether.internal"), [
    "HTTPRoute/mesh/split/rule/0/match/0",
    "echo.aether.internal/not-found",
  ]);
  assert.deepEqual(routesOf("b", "echo-v2.aether.internal"), ["echo-v2.aether.internal/default"]);
  // No route table for a TCP-only port; sniffed ports have one.
  const names = r.routes.map((x) => x.name);
  assert.ok(!names.some((n) => n.includes("redis.") || n.includes("dns.")));
  assert.ok(names.includes(captureRouteName("a", "plain.aether.internal:9001")));
  // Clusters stay demand-scoped: echo's set (echo + its backends) and the pass-through one.
  assert.deepEqual(r.clusters.map((c) => c.name), [
    PASSTHROUGH_CLUSTER,
    "echo-v1.aether.internal",
    "echo-v2.aether.internal",
    "echo.aether.internal",
    "echo.aether.internal:7070",
  ]);
});

Deno.test("capture inspectors: only on sniffed port numbers", () => {
  assert.equal(inspectorsDisabled([]), undefined);
  assert.deepEqual(inspectorsDisabled([80, 81, 82, 9000]), {
    not_match: {
      or_match: {
        rules: [
          { destination_port_range: { start: 80, end: 83 } },
          { destination_port_range: { start: 9000, end: 9001 } },
        ],
      },
    },
  });
  // No sniffed port at all: no inspector, nothing ever waits for a first byte.
  const { c } = golden("capture");
  const known = {
    ...c.mesh,
    services: c.mesh.services.filter((s) => s.name !== "plain"),
  };
  const l = translateNode(known, c.view, c.options).listeners[0].resource;
  assert.deepEqual((l.listener_filters as Obj[]).map((f) => f.name), [
    "envoy.filters.listener.original_dst",
  ]);
});

Deno.test("capture with identity: TCP chains ask for raw TCP; inbound takes it", () => {
  const { r } = golden("capture_identity");
  const l = r.listeners.find((x) => x.name === "capture|a/client-0")!.resource;
  const tcp = (l.filter_chains as Obj[]).find((x) => x.name === "redis.aether.internal|tcp")!;
  const [state, proxy] = (tcp.filters as Obj[]).map((f) => f.typed_config as Obj);
  assert.deepEqual((state.on_new_connection as Obj[])[0], {
    object_key: "envoy.network.application_protocols",
    format_string: { text_format_source: { inline_string: "aether-tcp" } },
  });
  assert.equal(proxy.cluster, "redis.aether.internal|a/client");
  const inboundChains = (name: string) =>
    (r.listeners.find((x) => x.name === name)!.resource.filter_chains as Obj[]).map((
      x,
    ) => [x.name, (x.filter_chain_match as Obj | undefined)?.application_protocols ?? []]);
  assert.deepEqual(inboundChains("inbound|b/redis-0"), [
    ["6379.redis.aether.internal", []],
    ["6379.redis.aether.internal|tcp", ["aether-tcp"]],
  ]);
  // web:80 is declared HTTP: no raw-TCP chain; plain:9000 is sniffed: it has one.
  assert.deepEqual(inboundChains("inbound|b/web-0"), [
    ["80.web.aether.internal", []],
    ["9000.plain.aether.internal", []],
    ["9000.plain.aether.internal|tcp", ["aether-tcp"]],
  ]);
  assert.deepEqual(inboundChains("inbound-internal|10.0.0.20|6379.redis.aether.internal"), [
    ["6379.redis.aether.internal", []],
    ["6379.redis.aether.internal|tcp", ["aether-tcp"]],
  ]);
  // Per caller identity route tables.
  assert.ok(r.routes.some((x) => x.name === captureRouteName("a/client", "web.aether.internal")));
});
