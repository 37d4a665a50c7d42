/**
 * The node role's endpoint churn: one node agent's sink (NodeMeshSink, with capture and SPIFFE
 * identity, as the DaemonSet runs) over a mesh of `services` Services (each with an EndpointSlice
 * and two producer routes, the first also sending to one of `services` ServiceImports), the
 * node's set holding them all. Each change is a new ClusterSetEndpoints for one import (the
 * registry source's way of saying "this service's endpoints changed"). Measures, per change, the
 * sink's time (withIdentities, setMesh and the snapshot; resolve excluded) and the
 * ClusterLoadAssignments encoded and other-type resources re-served, from the node's
 * `aether_xds_resources_encoded_total` / `_reused_total`. Prints one JSON line.
 *
 * deno run -A bench/node_eds.ts [services=500] [changes=30]
 */
import { Engine, type Resolved } from "../lib/engine/mod.ts";
import { type KubeObject, NETNS_ANNOTATION } from "../lib/gatewayapi/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { serviceObjects } from "../testbed/fixtures/mesh_config.ts";
import { EncodeMetrics, SnapshotCache } from "../agent/xds/cache/mod.ts";
import { TypeUrl } from "../agent/xds/proto.ts";
import { identityScheme } from "../agent/identity/mod.ts";
import { NodeMeshSink, NodeSnapshots } from "../agent/node/mod.ts";

const [SERVICES, CHANGES] = [500, 30].map((d, i) => Number(Deno.args[i] ?? d));
const NODE = "node-a";
const domain = "aether.internal";

function endpointsOf(s: number, moved?: string): KubeObject {
  return {
    apiVersion: "aether.io/v1alpha1",
    kind: "ClusterSetEndpoints",
    metadata: { name: `imp-${s}`, namespace: "mesh" },
    spec: {
      endpoints: [
        { cluster: "a.eu", address: `10.1.0.${s % 250}`, priority: 0 },
        { cluster: "b.eu", address: moved ?? `10.2.0.${s % 250}`, priority: 1 },
      ].map((e) => ({ ...e, ports: [{ name: "http", protocol: "TCP", port: 8080 }] })),
    },
  };
}

function service(i: number): KubeObject[] {
  const objs = serviceObjects(i, {});
  const route = structuredClone(objs[2]);
  (route.spec as { rules: { backendRefs: unknown[] }[] }).rules[0].backendRefs.push({
    group: "multicluster.x-k8s.io",
    kind: "ServiceImport",
    name: `imp-${i}`,
    port: 80,
  });
  objs[2] = route;
  return [...objs, {
    apiVersion: "multicluster.x-k8s.io/v1beta1",
    kind: "ServiceImport",
    metadata: { name: `imp-${i}`, namespace: "mesh" },
    spec: { type: "ClusterSetIP", ports: [{ name: "http", protocol: "TCP", port: 80 }] },
  }];
}

const pod: KubeObject = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "client", namespace: "mesh", annotations: { [NETNS_ANNOTATION]: "/x" } },
  spec: { nodeName: NODE, serviceAccountName: "client" },
  status: { phase: "Running", podIP: "10.1.0.3" },
};

const registry = new Registry();
const encodes = new EncodeMetrics(registry);
const snapshots = new NodeSnapshots({
  cache: new SnapshotCache(),
  encodeMetrics: encodes,
  translate: { capture: { port: 15001 }, identity: { trustDomain: "td.example" } },
});
const sink = new NodeMeshSink({
  nodeName: NODE,
  snapshots,
  identity: { scheme: identityScheme("td.example"), setWanted: () => false, changed: () => {} },
});
const times: number[] = [];
const timed = {
  name: sink.name,
  apply(r: Resolved) {
    const t = performance.now();
    sink.apply(r);
    times.push(performance.now() - t);
  },
  version: () => sink.version(),
};
const engine = new Engine({
  logger: new Logger("bench", () => {}),
  metrics: registry,
  resolve: { meshDomain: domain },
  sinks: [timed],
});
const services = Array.from({ length: SERVICES }, (_, i) => service(i));
const endpoints = Array.from({ length: SERVICES }, (_, s) => endpointsOf(s));
let revision = 0;
const apply = () =>
  engine.apply({
    revision: ++revision,
    objects: [...services.flat(), ...endpoints, pod],
    problems: [],
    origins: new Map(),
  });
await apply();
snapshots.request(NODE, services.map((_, i) => `svc-${i}.${domain}`));
const count = (c: "encoded" | "reused", types: string[]) =>
  types.reduce((n, type_url) => n + encodes[c].get({ type_url }), 0);
const others = [TypeUrl.listener, TypeUrl.route, TypeUrl.virtualHost, TypeUrl.cluster];
const cla0 = count("encoded", [TypeUrl.endpoint]);
const other0 = count("encoded", others) + count("reused", others);
times.length = 0;
for (let i = 0; i < CHANGES; i++) {
  const s = (i * 37) % SERVICES;
  endpoints[s] = endpointsOf(s, `10.250.${i % 250}.1`);
  await apply();
}
times.sort((a, b) => a - b);
const q = (p: number) =>
  Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))] * 100) / 100;
console.log(JSON.stringify({
  services: SERVICES,
  changes: CHANGES,
  sinkP50Ms: q(0.5),
  sinkP90Ms: q(0.9),
  clasEncodedPerChange: (count("encoded", [TypeUrl.endpoint]) - cla0) / CHANGES,
  otherResourcesPerChange: (count("encoded", others) + count("reused", others) - other0) / CHANGES,
}));
