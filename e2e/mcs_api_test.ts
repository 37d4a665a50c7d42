/**
 * The Multi-Cluster Services API on two real control planes (two kube-apiservers on their own
 * etcds) and one real registry etcd, with one aether MCS controller per cluster. The upstream
 * conformance suite (sigs.k8s.io/mcs-api/conformance) is not served by the Go module proxy, so its
 * API-level specs are written here from the public spec text, under the upstream spec names, with
 * its timeouts (20 s for ServiceImports and conditions, 5 s "consistently") and its 1.1 s gap
 * between the two clusters' exports.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { EtcdKv } from "../lib/registry/mod.ts";
import { McsController } from "../controller/mcs/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { startEtcd } from "./peers/etcd.ts";
import { installCrds, type Kube, startKube } from "./peers/kube.ts";
import { waitFor } from "./peers/proc.ts";

const MCS = "/apis/multicluster.x-k8s.io/v1beta1";
const WAIT_MS = 20_000;

interface Cluster {
  name: string;
  kube: Kube;
  client: KubeClient;
  controller?: McsController;
  metrics?: Registry;
}

// deno-lint-ignore no-explicit-any
type Obj = any;

function helloService(ns: string, over: Obj = {}): Obj {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "hello", namespace: ns, labels: { "service-label": "hello" } },
    spec: {
      selector: { app: "hello" },
      ports: [{ name: "tcp", protocol: "TCP", port: 42 }, {
        name: "udp",
        protocol: "UDP",
        port: 42,
      }],
      sessionAffinity: "ClientIP",
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
      ...over,
    },
  };
}

async function must(c: Cluster, method: string, path: string, body?: unknown): Promise<Obj> {
  const res = await c.kube.request(method, path, body);
  assert.ok(
    res.status < 300,
    `${c.name} ${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`,
  );
  return res.json;
}

/** Polls until `fn` gives a value (20 s by default: upstream's wait for imports and conditions). */
const poll = <T>(what: string, fn: () => Promise<T | undefined>, ms = WAIT_MS) =>
  waitFor(what, fn, ms);

const importPath = (ns: string) => `${MCS}/namespaces/${ns}/serviceimports/hello`;

/** The ServiceImport once `check` holds (20 s, 100 ms polls, as upstream). */
function awaitImport(
  c: Cluster,
  ns: string,
  check: (si: Obj) => boolean = () => true,
): Promise<Obj> {
  return poll(`ServiceImport ${ns}/hello on ${c.name}`, async () => {
    const res = await c.kube.request("GET", importPath(ns));
    return res.status === 200 && check(res.json) ? res.json : undefined;
  });
}

function awaitNoImport(c: Cluster, ns: string): Promise<true> {
  return poll(`no ServiceImport ${ns}/hello on ${c.name}`, async () => {
    const res = await c.kube.request("GET", importPath(ns));
    return res.status === 404 ? true : undefined;
  });
}

function awaitCondition(c: Cluster, ns: string, type: string, status: string): Promise<Obj> {
  return poll(`ServiceExport ${ns}/hello ${type}=${status} on ${c.name}`, async () => {
    const res = await c.kube.request("GET", `${MCS}/namespaces/${ns}/serviceexports/hello`);
    const cond = (res.json?.status?.conditions ?? []).find((x: Obj) => x.type === type);
    return cond?.status === status ? cond : undefined;
  });
}

/** Nothing for `ms` (upstream: Consistently … Within 5 s). */
async function consistently(what: string, ok: () => Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    assert.ok(await ok(), what);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

Deno.test("MCS API on two control planes and the registry", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-mcs-" });
  const crds = join(await ensurePeer("mcs-api-crds"), "crds");
  const registry = await startEtcd(join(dir, "registry"));
  const [a, b] = await Promise.all(["a", "b"].map(async (name): Promise<Cluster> => {
    const kube = await startKube(join(dir, name));
    await installCrds(kube, crds);
    return { name, kube, client: new KubeClient({ kubeconfig: kube.kubeconfig }) };
  }));
  const clusters = [a, b];
  const start = async (c: Cluster) => {
    c.controller = new McsController({
      client: c.client,
      kv: new EtcdKv({ url: registry.url }),
      origin: { region: "eu", cluster: c.name },
      identity: `controller-${c.name}`,
      trustDomain: `${c.name}.example`,
      ttlSeconds: 3,
      isLeader: () => true,
      logger: new Logger(`mcs-${c.name}`, () => {}),
      metrics: c.metrics = new Registry(),
    });
    await c.controller.start();
  };
  await Promise.all(clusters.map(start));
  let n = 0;
  /** A fresh namespace in both clusters, the hello Service in `a`. */
  const fresh = async (svc: Obj = {}) => {
    const ns = `mcs-conformance-${++n}`;
    for (const c of clusters) {
      await must(c, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
    }
    await must(a, "POST", `/api/v1/namespaces/${ns}/services`, helloService(ns, svc));
    return ns;
  };
  const exportOn = (c: Cluster, ns: string, spec: Obj = {}) =>
    must(c, "POST", `${MCS}/namespaces/${ns}/serviceexports`, {
      apiVersion: "multicluster.x-k8s.io/v1beta1",
      kind: "ServiceExport",
      metadata: { name: "hello", namespace: ns },
      spec,
    });
  const unexport = (c: Cluster, ns: string) =>
    must(c, "DELETE", `${MCS}/namespaces/${ns}/serviceexports/hello`);
  /** The second cluster's Service and export, 1.1 s after the first's (distinct timestamps). */
  const alsoOnB = async (ns: string, svc: Obj = {}, spec: Obj = {}) => {
    await new Promise((r) => setTimeout(r, 1100));
    await must(b, "POST", `/api/v1/namespaces/${ns}/services`, helloService(ns, svc));
    await exportOn(b, ns, spec);
  };

  try {
    await t.step(
      "aether: a ServiceImport's status is Ready, with no MCS EndpointSlices",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        for (const c of clusters) {
          const si = await awaitImport(c, ns, (si) => si.status?.endpointSliceObjects === "Absent");
          const ready = si.status.conditions.find((x: Obj) => x.type === "Ready");
          assert.equal(ready?.status, "True", JSON.stringify(si.status));
          assert.equal(ready?.reason, "Ready");
        }
      },
    );

    await t.step(
      "A ServiceImport should only exist as long as there's at least one exporting cluster",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        await awaitImport(a, ns);
        await alsoOnB(ns);
        await awaitImport(a, ns, (si) => si.status?.clusters?.length === 2);
        await unexport(a, ns);
        await awaitImport(a, ns, (si) => si.status?.clusters?.length === 1);
        await consistently(
          "the ServiceImport stays while b exports",
          async () => (await a.kube.request("GET", importPath(ns))).status === 200,
          2000,
        );
        await unexport(b, ns);
        await awaitNoImport(a, ns);
      },
    );

    await t.step(
      "Exporting a ClusterIP service should create a ServiceImport of type ClusterSetIP in the service's namespace in each cluster. Unexporting should delete the ServiceImport",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        for (const c of clusters) {
          assert.equal((await awaitImport(c, ns)).spec.type, "ClusterSetIP");
        }
        await unexport(a, ns);
        for (const c of clusters) await awaitNoImport(c, ns);
      },
    );

    await t.step(
      "The SessionAffinity for a ClusterSetIP ServiceImport should match the exported service's SessionAffinity",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        const si = await awaitImport(a, ns);
        assert.equal(si.spec.sessionAffinity, "ClientIP");
        assert.deepEqual(si.spec.sessionAffinityConfig, { clientIP: { timeoutSeconds: 10 } });
      },
    );

    await t.step(
      "The InternalTrafficPolicy for a ClusterSetIP ServiceImport should match the exported service's InternalTrafficPolicy",
      async () => {
        const ns = await fresh({ internalTrafficPolicy: "Cluster" });
        await exportOn(a, ns);
        assert.equal((await awaitImport(a, ns)).spec.internalTrafficPolicy, "Cluster");
      },
    );

    await t.step(
      "The TrafficDistribution for a ClusterSetIP ServiceImport should match the exported service's TrafficDistribution",
      async () => {
        const ns = await fresh({ trafficDistribution: "PreferClose" });
        await exportOn(a, ns);
        assert.equal((await awaitImport(a, ns)).spec.trafficDistribution, "PreferClose");
      },
    );

    await t.step("An IP should be allocated for a ClusterSetIP ServiceImport", async () => {
      const ns = await fresh();
      await exportOn(a, ns);
      for (const c of clusters) {
        const si = await awaitImport(c, ns, (si) => (si.spec.ips ?? []).length > 0);
        assert.match(si.spec.ips[0], /^10\.96\.\d+\.\d+$/);
        // The VIP is a local Service kube-proxy leaves alone; the import names it.
        const vip = si.metadata.annotations["multicluster.kubernetes.io/derived-service"];
        const svc = await must(c, "GET", `/api/v1/namespaces/${ns}/services/${vip}`);
        assert.equal(svc.spec.clusterIP, si.spec.ips[0]);
        assert.equal(svc.metadata.labels["service.kubernetes.io/service-proxy-name"], "aether");
        assert.equal(svc.spec.selector, undefined);
      }
    });

    await t.step(
      "The ports for a ClusterSetIP ServiceImport should match those of the exported service",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        const si = await awaitImport(a, ns);
        assert.deepEqual(si.spec.ports, [
          { name: "tcp", protocol: "TCP", port: 42 },
          { name: "udp", protocol: "UDP", port: 42 },
        ]);
      },
    );

    await t.step(
      "A ClusterIP service exported on two clusters should expose the union of the constituent service ports and raise a conflict",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        await alsoOnB(ns, {
          ports: [{ name: "tcp", protocol: "TCP", port: 42 }, {
            name: "stcp",
            protocol: "SCTP",
            port: 142,
          }],
        });
        for (const c of clusters) await awaitCondition(c, ns, "Conflict", "True");
        await awaitImport(
          a,
          ns,
          (si) =>
            JSON.stringify(
              si.spec.ports.map((p: Obj) => `${p.name}/${p.protocol}/${p.port}`).sort(),
            ) ===
              JSON.stringify(["stcp/SCTP/142", "tcp/TCP/42", "udp/UDP/42"]),
        );
      },
    );

    await t.step(
      "A ClusterIP service exported on two clusters with conflicting ports should apply the conflict resolution policy and report a Conflict condition on each ServiceExport",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        await alsoOnB(ns, { ports: [{ name: "tcp", protocol: "TCP", port: 43 }] });
        for (const c of clusters) {
          const cond = await awaitCondition(c, ns, "Conflict", "True");
          assert.match(cond.reason, /PortConflict/);
        }
        const si = await awaitImport(a, ns);
        assert.deepEqual(si.spec.ports.map((p: Obj) => p.port), [42, 42]);
      },
    );

    await t.step(
      "Exporting a headless service should create a ServiceImport of type Headless in the service's namespace in each cluster. Unexporting should delete the ServiceImport",
      async () => {
        const ns = await fresh({ clusterIP: "None" });
        await exportOn(a, ns);
        for (const c of clusters) assert.equal((await awaitImport(c, ns)).spec.type, "Headless");
        await unexport(a, ns);
        for (const c of clusters) await awaitNoImport(c, ns);
      },
    );

    await t.step("No clusterset IP should be allocated for a Headless ServiceImport", async () => {
      const ns = await fresh({ clusterIP: "None" });
      await exportOn(a, ns);
      await awaitImport(a, ns);
      await consistently(
        "no IPs",
        async () => ((await must(a, "GET", importPath(ns))).spec.ips ?? []).length === 0,
      );
    });

    await t.step(
      "Exporting an ExternalName service should set ServiceExport Valid condition to False",
      async () => {
        const ns = await fresh({
          type: "ExternalName",
          externalName: "example.com",
          selector: undefined,
          sessionAffinity: undefined,
          sessionAffinityConfig: undefined,
        });
        await exportOn(a, ns);
        const cond = await awaitCondition(a, ns, "Valid", "False");
        assert.equal(cond.reason, "InvalidServiceType");
        await consistently(
          "no ServiceImport",
          async () => (await a.kube.request("GET", importPath(ns))).status === 404,
        );
      },
    );

    await t.step(
      "A service exported on two clusters with conflicting headlessness should apply the conflict resolution policy and report a Conflict condition on the ServiceExport",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        await alsoOnB(ns, { clusterIP: "None" });
        for (const c of clusters) {
          assert.match((await awaitCondition(c, ns, "Conflict", "True")).reason, /TypeConflict/);
          assert.equal((await awaitImport(c, ns)).spec.type, "ClusterSetIP");
          // The controller's /metrics say so too: imports kept, exports with a conflict.
          const text = c.metrics!.render();
          const value = (name: string) =>
            Number(text.match(new RegExp(`^${name} (\\d+)$`, "m"))?.[1]);
          assert.ok(value("aether_mcs_export_conflicts") >= 1, text);
          assert.ok(value("aether_mcs_service_imports") >= 1, text);
          assert.equal(value("aether_registry_up"), 1);
        }
      },
    );

    await t.step(
      "Only labels and annotations specified as exported in the ServiceExport should be propagated to the ServiceImport",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns, {
          exportedLabels: { "dummy-label": "true" },
          exportedAnnotations: { "dummy-annotation": "true" },
        });
        const si = await awaitImport(a, ns, (si) => si.metadata.labels?.["dummy-label"] === "true");
        assert.equal(si.metadata.annotations["dummy-annotation"], "true");
        assert.equal(si.metadata.labels["service-label"], undefined);
      },
    );

    await t.step(
      "A service exported on two clusters with conflicting annotations and labels should apply the conflict resolution policy and report a Conflict condition on each ServiceExport",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns, { exportedLabels: { "dummy-label": "true" } });
        await alsoOnB(ns, {}, { exportedLabels: { "dummy-label2": "true" } });
        for (const c of clusters) {
          assert.match((await awaitCondition(c, ns, "Conflict", "True")).reason, /LabelsConflict/);
        }
        const si = await awaitImport(a, ns);
        assert.equal(si.metadata.labels["dummy-label"], "true");
        assert.equal(si.metadata.labels["dummy-label2"], undefined);
      },
    );

    await t.step(
      "aether: ready endpoints of an export reach the registry with their SPIFFE ID",
      async () => {
        const ns = await fresh();
        await alsoOnB(ns);
        await must(b, "POST", `/api/v1/namespaces/${ns}/serviceaccounts`, {
          metadata: { name: "web" },
        });
        await must(b, "POST", `/api/v1/namespaces/${ns}/pods`, {
          metadata: { name: "hello-1", labels: { app: "hello" } },
          spec: { serviceAccountName: "web", containers: [{ name: "c", image: "hello" }] },
        });
        const slice = (ready: boolean, resourceVersion?: string) => ({
          apiVersion: "discovery.k8s.io/v1",
          kind: "EndpointSlice",
          metadata: {
            name: "hello-b",
            namespace: ns,
            labels: { "kubernetes.io/service-name": "hello" },
            ...(resourceVersion ? { resourceVersion } : {}),
          },
          addressType: "IPv4",
          ports: [{ name: "tcp", protocol: "TCP", port: 4242 }],
          endpoints: [{
            addresses: ["10.244.1.7"],
            conditions: { ready },
            nodeName: "node-b",
            targetRef: { kind: "Pod", name: "hello-1", namespace: ns },
          }],
        });
        const slices = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`;
        await must(b, "POST", slices, slice(true));
        const kv = new EtcdKv({ url: registry.url });
        const key = `/aether/v1/eu/b/eps/${ns}/hello/hello-1`;
        const rec = await poll("the endpoint in the registry", async () => {
          const kvs = (await kv.range(key)).kvs;
          return kvs.length ? JSON.parse(kvs[0].value) : undefined;
        });
        assert.deepEqual(
          [rec.ip, rec.ports, rec.node, rec.spiffeId],
          [
            "10.244.1.7",
            // The target port, with the exported Service's own port (StrictPortConflict).
            [{ name: "tcp", protocol: "TCP", port: 4242, servicePort: 42 }],
            "node-b",
            `spiffe://b.example/ns/${ns}/sa/web`,
          ],
        );
        const cur = await must(b, "GET", `${slices}/hello-b`);
        await must(b, "PUT", `${slices}/hello-b`, slice(false, cur.metadata.resourceVersion));
        await poll(
          "the endpoint no longer ready: gone from the registry",
          async () => (await kv.range(key)).kvs.length === 0 ? true : undefined,
        );
      },
    );

    await t.step(
      "aether: a cluster whose controller dies leaves the clusterset within the lease TTL + 2 s",
      async () => {
        const ns = await fresh();
        await exportOn(a, ns);
        await alsoOnB(ns);
        await awaitImport(a, ns, (si) => si.status?.clusters?.length === 2);
        const cond = await awaitCondition(b, ns, "Ready", "True");
        assert.equal(cond.reason, "Exported");
        await b.controller!.stop(); // as SIGKILL looks to the registry: no revoke, no keepalive
        const t0 = Date.now();
        await awaitImport(
          a,
          ns,
          (si) => JSON.stringify(si.status?.clusters) === JSON.stringify([{ cluster: "a.eu" }]),
        );
        const took = Date.now() - t0;
        assert.ok(took <= 5000, `b left after ${took} ms (TTL 3 s)`);
        await start(b);
        await awaitImport(a, ns, (si) => si.status?.clusters?.length === 2);
      },
    );
  } finally {
    for (const c of clusters) {
      await c.controller?.stop();
      c.client.close();
      await c.kube.stop();
    }
    await registry.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
