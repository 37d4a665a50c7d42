/**
 * Per-Gateway edges against a real kube-apiserver: the controller applies a Deployment (the edge
 * agent for that Gateway only) and a LoadBalancer Service (its listener ports, spec.addresses as
 * MetalLB's annotation); until the Service has an address the Gateway is Programmed=False
 * AddressNotAssigned; the address the LoadBalancer writes into the Service status becomes the
 * Gateway's status.addresses; deleting the Gateway deletes its edge. (No LoadBalancer
 * implementation runs here: the test writes the Service status as one would.)
 */
import { join } from "node:path";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import type { SourceRevision } from "../lib/source/mod.ts";
import { onlyGateway } from "../agent/config_source.ts";
import { installCrds, type Kube, startKube } from "../e2e/peers/kube.ts";
import { waitFor } from "../e2e/peers/proc.ts";
import { controllerDefaults, runController } from "./run.ts";
import {
  edgeIdentityFlags,
  edgeName,
  type EdgeOptions,
  edgeResources,
  GATEWAY_LABEL,
  gatewayLabelValue,
} from "./edge.ts";

// deno-lint-ignore no-explicit-any
type Any = any;
const cond = (conds: Any[] | undefined, type: string) => conds?.find((c) => c.type === type);

/** Waits until `f` gives a truthy value (errors count as not yet). */
const until = <T>(what: string, f: () => Promise<T | undefined | false>, ms = 60_000) =>
  waitFor(what, async () => (await f()) || undefined, ms) as Promise<T>;

Deno.test("edge names: DNS-label safe, at most 63 characters, distinct", () => {
  assertEquals(edgeName("default", "gw"), "aether-edge-default-gw");
  const long = edgeName("a".repeat(60), "b".repeat(60));
  assert(long.length <= 63 && /^[a-z0-9-]+[a-z0-9]$/.test(long), long);
  assert(long !== edgeName("a".repeat(60), "b".repeat(59)));
});

Deno.test("edge pods: a listener edit changes the Service, never the pod template; a roll surges and drains", () => {
  const o = { namespace: "aether-system", image: "aether:dev", serviceAccount: "aether-edge" };
  const gw = (ports: number[]) => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { namespace: "default", name: "gw" },
    spec: { listeners: ports.map((port) => ({ name: `l${port}`, port, protocol: "HTTP" })) },
  });
  const [d2, s2] = edgeResources(gw([80, 443]), o) as Any[];
  const [d3, s3] = edgeResources(gw([80, 443, 8443]), o) as Any[];
  assertEquals(JSON.stringify(d3), JSON.stringify(d2), "the Deployment does not change");
  assertEquals(s3.spec.ports.map((p: Any) => p.port), [80, 443, 8443]);
  assertEquals(s2.spec.ports.map((p: Any) => p.port), [80, 443]);
  assertEquals(d2.spec.strategy.rollingUpdate, { maxSurge: 1, maxUnavailable: 0 });
  const c = d2.spec.template.spec.containers[0];
  assert(c.args.includes("--shutdown-drain=5s"), c.args.join(" "));
  assert(c.lifecycle.preStop.exec.command.join(" ").includes("sleep"));
});

/** One Gateway with one HTTP listener, and the edge options of the chart's defaults. */
const gateway = {
  apiVersion: "gateway.networking.k8s.io/v1",
  kind: "Gateway",
  metadata: { namespace: "default", name: "gw" },
  spec: { listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
};
const base = { namespace: "aether-system", image: "aether:dev", serviceAccount: "aether-edge" };
/** The edge container's args for {@link gateway} with `o`. */
const edgeArgs = (o: EdgeOptions) =>
  (edgeResources(gateway, o) as Any[])[0].spec.template.spec.containers[0].args as string[];

Deno.test("edge identity: the pod mounts the SPIRE agent's socket folder and names the trust domain", () => {
  const plain = (edgeResources(gateway, base) as Any[])[0].spec.template.spec;
  assertEquals(plain.volumes, undefined);
  assert(!plain.containers[0].args.some((a: string) => a.startsWith("--spire")));
  const o = {
    ...base,
    ...edgeIdentityFlags("/run/spire/agent-sockets", "cluster.local", ["kube-system"]),
  };
  const spec = (edgeResources(gateway, o) as Any[])[0].spec.template.spec;
  const c = spec.containers[0];
  assert(c.args.includes("--spire-socket=/run/spire/agent-sockets/api.sock"), c.args.join(" "));
  assert(c.args.includes("--trust-domain=cluster.local"), c.args.join(" "));
  assert(c.args.includes("--outside-mesh-namespace=kube-system"), c.args.join(" "));
  assertEquals(c.volumeMounts, [
    { name: "spire-agent", mountPath: "/run/spire/agent-sockets", readOnly: true },
  ]);
  assertEquals(spec.volumes[0].hostPath.path, "/run/spire/agent-sockets");
  let err = "";
  try {
    edgeIdentityFlags("/run/spire/agent-sockets", undefined);
  } catch (e) {
    err = String(e);
  }
  assert(err.includes("--edge-trust-domain"), err);
});

Deno.test("edge clusterset: each edge pod reads the controller's registry as this cluster", () => {
  assert(!edgeArgs(base).some((a) => a.startsWith("--registry-url")));
  const clusterset = { registryUrl: "http://registry:2379", region: "eu", cluster: "east" };
  const withSet = edgeArgs({ ...base, clusterset });
  for (const a of ["--registry-url=http://registry:2379", "--region=eu", "--cluster=east"]) {
    assert(withSet.includes(a), withSet.join(" "));
  }
});

Deno.test("edge scoped routes: the controller's --edge-scoped-routes-at reaches each edge pod", () => {
  assert(!edgeArgs(base).some((a) => a.startsWith("--scoped-routes-at")), "unset: the agent's own");
  assert(edgeArgs({ ...base, scopedRoutesAt: 0 }).includes("--scoped-routes-at=0"));
  assert(edgeArgs({ ...base, scopedRoutesAt: 500 }).includes("--scoped-routes-at=500"));
  assert(!edgeArgs(base).includes("--scoped-routes-on-demand"));
  assert(edgeArgs({ ...base, scopedRoutesOnDemand: true }).includes("--scoped-routes-on-demand"));
});

Deno.test("edge labels: a long Gateway name still gives a valid label value (≤ 63)", () => {
  assertEquals(gatewayLabelValue("default", "gw"), "default.gw");
  // The conformance suite's http-listener-isolation-with-hostname-intersection Gateway.
  const ns = "gateway-conformance-infra", gw = "http-listener-isolation-with-hostname-intersection";
  const v = gatewayLabelValue(ns, gw);
  assert(v.length <= 63 && /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/.test(v), v);
  assert(v !== gatewayLabelValue(ns, `${gw}x`));
  const gateway = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { namespace: ns, name: gw },
    spec: { gatewayClassName: "aether", listeners: [{ name: "http", port: 80, protocol: "HTTP" }] },
  };
  const options = {
    namespace: "aether-system",
    image: "aether:dev",
    serviceAccount: "aether-edge",
  };
  for (const m of edgeResources(gateway as Any, options)) {
    for (const value of Object.values(m.metadata.labels ?? {})) {
      assert(String(value).length <= 63, `${m.kind} label ${value}`);
    }
    assertEquals((m.metadata.labels as Record<string, string>)[GATEWAY_LABEL], v);
  }
});

Deno.test("agent --gateway: source revisions hold only that Gateway", async () => {
  const gw = (namespace: string, name: string) => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { namespace, name },
    spec: {},
  });
  const seen: SourceRevision[] = [];
  const source = onlyGateway(new MemorySource([gw("a", "x"), gw("a", "y"), gw("b", "x")]), "a/x");
  await source.start((s) => seen.push(s));
  await source.stop();
  assertEquals(seen[0].objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`), ["a/x"]);
});

Deno.test("agent --gateway: the edge binds its pod address, not the Gateway's IPAddresses", async () => {
  const addresses = [{ type: "IPAddress", value: "10.216.0.200" }, { value: "10.216.0.201" }];
  const gateway = {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "Gateway",
    metadata: { namespace: "a", name: "x" },
    spec: { addresses, listeners: [] },
  };
  const seen: SourceRevision[] = [];
  const source = onlyGateway(new MemorySource([gateway]), "a/x");
  await source.start((s) => seen.push(s));
  await source.stop();
  assertEquals((seen[0].objects[0].spec as Any).addresses, []);
  assertEquals(gateway.spec.addresses.length, 2, "the source's object is not changed");
  const other = { ...gateway, spec: { addresses: [{ type: "Hostname", value: "h" }] } };
  const kept: SourceRevision[] = [];
  const s2 = onlyGateway(new MemorySource([other]), "a/x");
  await s2.start((s) => kept.push(s));
  await s2.stop();
  assertEquals((kept[0].objects[0].spec as Any).addresses, [{ type: "Hostname", value: "h" }]);
});

Deno.test("controller: one edge per Gateway; its LoadBalancer address is the Gateway's", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-edge-" });
  const kube: Kube = await startKube(dir);
  const logs: string[] = [];
  let controller;
  try {
    await installCrds(kube, join(await ensurePeer("gateway-api-crds"), "standard"));
    const post = async (path: string, body: unknown) => {
      const r = await kube.request("POST", path, body);
      assertEquals(r.status, 201, JSON.stringify(r.json));
    };
    await post("/api/v1/namespaces", { metadata: { name: "aether-system" } });
    const GW = "/apis/gateway.networking.k8s.io/v1";
    await post(`${GW}/gatewayclasses`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GatewayClass",
      metadata: { name: "aether" },
      spec: { controllerName: "gateway.aether.io/edge" },
    });
    await post(`${GW}/namespaces/default/gateways`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "Gateway",
      metadata: { name: "gw" },
      spec: {
        gatewayClassName: "aether",
        addresses: [{ type: "IPAddress", value: "10.216.0.7" }],
        listeners: [
          { name: "http", port: 80, protocol: "HTTP" },
          { name: "alt", port: 8080, protocol: "HTTP" },
        ],
      },
    });
    controller = await runController({
      ...controllerDefaults,
      client: new KubeClient({ kubeconfig: kube.kubeconfig }),
      identity: "edge-test",
      leaseNamespace: "aether-system",
      retryPeriodMs: 500,
      logger: new Logger("controller", (l) => logs.push(l), "info"),
      edge: {
        namespace: "aether-system",
        image: "aether.local/aether:dev",
        serviceAccount: "aether-edge",
      },
    });
    const name = "aether-edge-default-gw";
    const get = (path: string) => kube.request("GET", path);
    const deployPath = `/apis/apps/v1/namespaces/aether-system/deployments/${name}`;
    const svcPath = `/api/v1/namespaces/aether-system/services/${name}`;
    const gwPath = `${GW}/namespaces/default/gateways/gw`;

    const deploy = await until("edge Deployment", async () => {
      const r = await get(deployPath);
      return r.status === 200 ? r.json : undefined;
    });
    // Owned by the GatewayClass: deleting it (helm uninstall) garbage-collects the edge.
    const gc = (await get(`${GW}/gatewayclasses/aether`)).json;
    const owner = {
      apiVersion: GW.slice(6),
      kind: "GatewayClass",
      name: "aether",
      uid: gc.metadata.uid,
    };
    assertEquals(deploy.metadata.ownerReferences, [owner]);
    const args: string[] = deploy.spec.template.spec.containers[0].args;
    assert(args.includes("--gateway=default/gw") && args.includes("standalone"), args.join(" "));
    assertEquals(deploy.spec.template.spec.serviceAccountName, "aether-edge");
    const svc = await until("edge Service", async () => {
      const r = await get(svcPath);
      return r.status === 200 ? r.json : undefined;
    });
    assertEquals(svc.metadata.ownerReferences, [owner]);
    assertEquals(svc.spec.type, "LoadBalancer");
    assertEquals(svc.spec.ports.map((p: Any) => p.port), [80, 8080]);
    assertEquals(svc.metadata.annotations["metallb.io/loadBalancerIPs"], "10.216.0.7");

    const pending = await until("Gateway waits for an address", async () => {
      const s = (await get(gwPath)).json.status;
      return cond(s?.conditions, "Programmed")?.reason === "AddressNotAssigned" ? s : undefined;
    });
    assertEquals(pending.addresses ?? [], []);
    assertEquals(cond(pending.conditions, "Accepted").status, "True");

    // What the LoadBalancer implementation does: write the Service's ingress.
    const lb = await kube.request("PATCH", `${svcPath}/status`, {
      status: { loadBalancer: { ingress: [{ ip: "10.216.0.7", ipMode: "VIP" }] } },
    });
    assertEquals(lb.status, 200, JSON.stringify(lb.json));
    // An address but no ready edge pod behind it yet: Pending, the address already reported.
    const waiting = await until("Gateway Pending for its edge pod", async () => {
      const s = (await get(gwPath)).json.status;
      return cond(s?.conditions, "Programmed")?.reason === "Pending" ? s : undefined;
    });
    assertEquals(waiting.addresses, [{ type: "IPAddress", value: "10.216.0.7" }]);
    // What the EndpointSlice controller writes once the edge pod is ready.
    const slice = await kube.request(
      "POST",
      "/apis/discovery.k8s.io/v1/namespaces/aether-system/endpointslices",
      {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: {
          name: `${svc.metadata.name}-abcde`,
          labels: { "kubernetes.io/service-name": svc.metadata.name },
        },
        addressType: "IPv4",
        endpoints: [{ addresses: ["10.213.0.9"], conditions: { ready: true } }],
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      },
    );
    assertEquals(slice.status, 201, JSON.stringify(slice.json));
    const ready = await until("Gateway address from the LoadBalancer", async () => {
      const s = (await get(gwPath)).json.status;
      return cond(s?.conditions, "Programmed")?.status === "True" ? s : undefined;
    });
    assertEquals(ready.addresses, [{ type: "IPAddress", value: "10.216.0.7" }]);

    const del = await kube.request("DELETE", gwPath);
    assertEquals(del.status, 200);
    await until(
      "edge deleted",
      async () => (await get(deployPath)).status === 404 && (await get(svcPath)).status === 404,
    );
  } catch (e) {
    console.error(logs.slice(-30).join("\n"));
    throw e;
  } finally {
    await controller?.close();
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
