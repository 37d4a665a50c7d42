import assert from "node:assert/strict";
import { Logger } from "../log/mod.ts";
import { Registry } from "../metrics/mod.ts";
import { resolve, ResolveState } from "../gatewayapi/mod.ts";
import type { SourceObject } from "../source/mod.ts";
import { Engine } from "./engine.ts";
import type { Resolved, Sink } from "./types.ts";

const GW = "gateway.networking.k8s.io/v1";

const route = (value: string): SourceObject => ({
  apiVersion: GW,
  kind: "HTTPRoute",
  metadata: { name: "web", namespace: "infra", generation: 1 },
  spec: {
    parentRefs: [{ name: "edge" }],
    rules: [{
      filters: [{
        type: "RequestHeaderModifier",
        requestHeaderModifier: { set: [{ name: "x-edit", value }] },
      }],
      backendRefs: [{ name: "app", port: 80 }],
    }],
  },
});

const base: SourceObject[] = [
  {
    apiVersion: GW,
    kind: "GatewayClass",
    metadata: { name: "aether", generation: 1 },
    spec: { controllerName: "gateway.aether.io/edge" },
  },
  {
    apiVersion: GW,
    kind: "Gateway",
    metadata: { name: "edge", namespace: "infra", generation: 1 },
    spec: {
      gatewayClassName: "aether",
      listeners: [{ name: "http", port: 8080, protocol: "HTTP" }],
    },
  },
  {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "app", namespace: "infra" },
    spec: { ports: [{ port: 80 }] },
  },
  route("0"),
];

Deno.test("engine: aether_resolves_total counts cold and edit resolves; an edit serves as cold would", async () => {
  const metrics = new Registry();
  const seen: Resolved[] = [];
  const sink: Sink = { name: "recorder", apply: (r) => void seen.push(r) };
  const engine = new Engine({ logger: new Logger("test", () => {}), metrics, sinks: [sink] });
  const apply = (revision: number, objects: SourceObject[]) =>
    engine.apply({ revision, objects, problems: [], origins: new Map() });
  await apply(1, base);
  const edited = base.with(3, route("1"));
  await apply(2, edited);
  // A new Service: not an edit of routes only.
  await apply(3, [...edited, { ...base[2], metadata: { name: "other", namespace: "infra" } }]);
  const text = metrics.render();
  assert.match(text, /^aether_resolves_total\{path="cold"\} 2$/m);
  assert.match(text, /^aether_resolves_total\{path="edit"\} 1$/m);
  assert.deepStrictEqual(seen[1].result, resolve(edited, {}, new ResolveState()));
  const vhost = seen[1].result.ir.listeners[0].filterChains[0];
  assert.ok(vhost.kind === "http" && JSON.stringify(vhost.virtualHosts).includes('"x-edit"'));
});

Deno.test("engine: revisions from the API server (admitted) take the edit path too", async () => {
  const metrics = new Registry();
  const engine = new Engine({ logger: new Logger("test", () => {}), metrics, sinks: [] });
  const apply = (revision: number, objects: SourceObject[]) =>
    engine.apply({ revision, objects, problems: [], origins: new Map(), admitted: true });
  await apply(1, base);
  await apply(2, base.with(3, route("1")));
  await apply(3, base.with(3, route("2")));
  const text = metrics.render();
  assert.match(text, /^aether_resolves_total\{path="cold"\} 1$/m);
  assert.match(text, /^aether_resolves_total\{path="edit"\} 2$/m);
});

Deno.test("engine: a revision changing only ClusterSetEndpoints takes the endpoints path", async () => {
  const metrics = new Registry();
  const seen: Resolved[] = [];
  const sink: Sink = { name: "recorder", apply: (r) => void seen.push(r) };
  const engine = new Engine({ logger: new Logger("test", () => {}), metrics, sinks: [sink] });
  const apply = (revision: number, objects: SourceObject[]) =>
    engine.apply({ revision, objects, problems: [], origins: new Map() });
  const endpoints = (address: string): SourceObject => ({
    apiVersion: "aether.io/v1alpha1",
    kind: "ClusterSetEndpoints",
    metadata: { name: "api", namespace: "infra" },
    spec: {
      endpoints: [{
        cluster: "b.eu",
        address,
        ports: [{ name: "http", protocol: "TCP", port: 8080 }],
        priority: 1,
      }],
    },
  });
  const imported: SourceObject[] = [
    ...base.slice(0, 3),
    {
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceImport",
      metadata: { name: "api", namespace: "infra" },
      spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 80 }] },
    },
    endpoints("10.2.0.1"),
    {
      ...route("0"),
      spec: {
        parentRefs: [{ name: "edge" }],
        rules: [{
          backendRefs: [{
            group: "multicluster.x-k8s.io",
            kind: "ServiceImport",
            name: "api",
            port: 80,
          }],
        }],
      },
    },
  ];
  await apply(1, imported);
  const changed = imported.with(4, endpoints("10.2.0.2"));
  await apply(2, changed);
  const text = metrics.render();
  assert.match(text, /^aether_resolves_total\{path="cold"\} 1$/m);
  assert.match(text, /^aether_resolves_total\{path="endpoints"\} 1$/m);
  assert.deepStrictEqual(seen[1].result, resolve(changed, {}, new ResolveState()));
  const cluster = seen[1].result.ir.clusters.find((c) => c.name.includes("clusterset"));
  assert.deepStrictEqual(cluster?.endpoints.map((e) => e.address), ["10.2.0.2"]);
});
