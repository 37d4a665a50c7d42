/**
 * The node role runs the shared pipeline: its /status is the pipeline's (Pods are a known kind,
 * not a problem), and its DNS records and xDS clusters come from one resolve, so a mesh name
 * claimed by two Services answers and routes to the same one. No Envoy here (`envoy: "none"`);
 * DNS is asked with a real dig.
 */
import assert from "node:assert/strict";
import { Logger } from "../../lib/log/mod.ts";
import { MemorySource } from "../../testbed/memory_source.ts";
import type { SourceObject } from "../../lib/source/mod.ts";
import { dig, parseDig } from "../dns/_test_utils.ts";
import { NODE_PROXY_DRAIN_ARGS, nodeDefaults, runNode } from "./run.ts";
import { NETNS_ANNOTATION } from "../../lib/gatewayapi/mod.ts";

const service = (ns: string, ip: string, created?: string): SourceObject => ({
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "web", namespace: ns, ...(created ? { creationTimestamp: created } : {}) },
  spec: { clusterIP: ip, ports: [{ name: "http", port: 80 }] },
});

const slice = (ns: string, address: string): SourceObject => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: { name: `web-${ns}`, namespace: ns, labels: { "kubernetes.io/service-name": "web" } },
  addressType: "IPv4",
  ports: [{ name: "http", port: 8080 }],
  endpoints: [{ addresses: [address], conditions: { ready: true } }],
});

Deno.test("node role: shared pipeline status, Pods known, DNS and xDS agree on the owner", async () => {
  const nodeName = `node-${crypto.randomUUID().slice(0, 8)}`;
  const source = new MemorySource([
    // `web` in a (no creationTimestamp: counts as oldest) and in b (2020): a owns web.<domain>.
    service("b", "10.96.0.20", "2020-01-01T00:00:00Z"),
    service("a", "10.96.0.10"),
    slice("a", "127.0.0.10"),
    slice("b", "127.0.0.20"),
    {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name: "client",
        namespace: "a",
        annotations: { [NETNS_ANNOTATION]: "/proc/1/ns/net" },
      },
      spec: { nodeName },
      status: { phase: "Running", podIP: "10.0.0.5" },
    },
  ]);
  const agent = await runNode({
    ...nodeDefaults,
    source,
    nodeName,
    envoy: "none",
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "127.0.0.1:0",
    dnsUpstreams: [],
    logger: new Logger("agent", () => {}, "error"),
  });
  try {
    const status = agent.status();
    assert.equal(status.error, undefined);
    assert.equal(status.pods, 1);
    assert.deepEqual(status.problems.filter((p) => p.kind === "Pod"), [], "Pods are a known kind");
    assert.ok(status.version, "the pipeline served a version");

    // DNS: a real query answers a/web's VIP.
    const out = parseDig(
      await dig([
        "@127.0.0.1",
        "-p",
        String(agent.dns!.port),
        "+tries=3",
        "web.aether.internal",
        "A",
      ]),
    );
    assert.equal(out.status, "NOERROR", out.raw);
    assert.match(out.answer.join("\n"), /\s10\.96\.0\.10$/m);
    assert.doesNotMatch(out.answer.join("\n"), /10\.96\.0\.20/);

    // xDS: the node's cluster for web.aether.internal has a/web's endpoints.
    agent.snapshots.request(nodeName, ["web.aether.internal"]);
    const eds = agent.snapshots.resources(nodeName)!.endpoints
      .find((e) => e.name === "web.aether.internal")!;
    const text = JSON.stringify(eds.resource);
    assert.ok(text.includes("127.0.0.10") && !text.includes("127.0.0.20"), text);
  } finally {
    await agent.close();
  }
});

Deno.test("node role: the chart's node-proxy Envoy drains as the one the agent starts", async () => {
  const chart = await Deno.readTextFile(
    new URL("../../charts/aether/templates/node_agent.yaml", import.meta.url),
  );
  assert.ok(chart.includes(`exec envoy `), "the chart starts the node proxy's Envoy");
  assert.ok(chart.includes(NODE_PROXY_DRAIN_ARGS.join(" ")), NODE_PROXY_DRAIN_ARGS.join(" "));
});
