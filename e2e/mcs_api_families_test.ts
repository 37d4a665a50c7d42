/**
 * The mcs-api conformance spec on IP families (upstream service_import.go, Required), written
 * from the public spec text like e2e/mcs_api_test.ts: a ClusterSetIP ServiceImport has one IP per
 * IP family, `spec.ips[i]` of family `spec.ipFamilies[i]`. Two real kube-apiservers, cluster `a`
 * dual-stack (IPv4 first), cluster `b` IPv4 only, one real registry etcd and one aether MCS
 * controller per cluster; the Services are exported from `a`. Upstream checks the exporting
 * cluster only; here every cluster is checked, and the clusterset VIP Service behind the import.
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
/** Upstream's wait for ServiceImports and conditions. */
const WAIT_MS = 20_000;
const RANGES = { a: "10.96.0.0/16,fd00:10:96::/112", b: "10.97.0.0/16" };

interface Cluster {
  name: "a" | "b";
  kube: Kube;
  client: KubeClient;
  controller?: McsController;
}

// deno-lint-ignore no-explicit-any
type Obj = any;

/** An IP's family, as upstream's ipFamilyOf (a dotted quad is IPv4, anything with `:` IPv6). */
function ipFamilyOf(ip: string): string | undefined {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) return "IPv4";
  if (ip.includes(":") && /^[0-9a-f:.]+$/i.test(ip)) return "IPv6";
  return undefined;
}

async function must(c: Cluster, method: string, path: string, body?: unknown): Promise<Obj> {
  const res = await c.kube.request(method, path, body);
  assert.ok(
    res.status < 300,
    `${c.name} ${method} ${path}: ${res.status} ${JSON.stringify(res.json)}`,
  );
  return res.json;
}

/** The ServiceImport once `check` holds (20 s, as upstream). */
function awaitImport(c: Cluster, ns: string, check: (si: Obj) => boolean): Promise<Obj> {
  return waitFor(`ServiceImport ${ns}/hello on ${c.name}`, async () => {
    const res = await c.kube.request("GET", `${MCS}/namespaces/${ns}/serviceimports/hello`);
    return res.status === 200 && check(res.json) ? res.json : undefined;
  }, WAIT_MS);
}

/**
 * The spec's checks on one import: IPs not empty, as many as IP families, each a valid IP of the
 * family at its index. Returns the families and IPs.
 */
function checkFamilies(c: Cluster, si: Obj): { ipFamilies: string[]; ips: string[] } {
  const { ips, ipFamilies } = si.spec;
  const what = `${c.name}: ${JSON.stringify({ ips, ipFamilies })}`;
  assert.ok(ips.length > 0, what);
  assert.equal(ips.length, (ipFamilies ?? []).length, `IPs and IP families differ: ${what}`);
  ips.forEach((ip: string, i: number) => {
    assert.ok(ipFamilyOf(ip), `not a valid IP: ${what}`);
    assert.equal(ipFamilyOf(ip), ipFamilies[i], `ips[${i}] not of ipFamilies[${i}]: ${what}`);
  });
  return { ipFamilies, ips };
}

/** The clusterset VIP Service behind an import: its cluster IPs and families are the import's. */
async function checkVip(c: Cluster, ns: string, si: Obj, policy: string): Promise<void> {
  const name = si.metadata.annotations["multicluster.kubernetes.io/derived-service"];
  const svc = await must(c, "GET", `/api/v1/namespaces/${ns}/services/${name}`);
  assert.deepEqual(svc.spec.clusterIPs, si.spec.ips, c.name);
  assert.deepEqual(svc.spec.ipFamilies, si.spec.ipFamilies, c.name);
  assert.equal(svc.spec.ipFamilyPolicy, policy, c.name);
}

Deno.test("MCS API: IP families on a dual-stack and an IPv4-only control plane", async (t) => {
  const dir = await Deno.makeTempDir({ prefix: "aether-mcs-families-" });
  const crds = join(await ensurePeer("mcs-api-crds"), "crds");
  const registry = await startEtcd(join(dir, "registry"));
  const clusters: Cluster[] = [];
  try {
    for (const name of ["a", "b"] as const) {
      const kube = await startKube(join(dir, name), { serviceClusterIpRange: RANGES[name] });
      clusters.push({ name, kube, client: new KubeClient({ kubeconfig: kube.kubeconfig }) });
      await installCrds(kube, crds);
    }
    const [a, b] = clusters;
    for (const c of clusters) {
      c.controller = new McsController({
        client: c.client,
        kv: new EtcdKv({ url: registry.url }),
        origin: { region: "eu", cluster: c.name },
        identity: `controller-${c.name}`,
        trustDomain: `${c.name}.example`,
        ttlSeconds: 5,
        isLeader: () => true,
        logger: new Logger(`mcs-${c.name}`, () => {}),
        metrics: new Registry(),
      });
      await c.controller.start();
    }
    let n = 0;
    /** A fresh namespace in both clusters; the hello Service (`families`) exported from `a`. */
    const exportFromA = async (families: Obj) => {
      const ns = `mcs-conformance-${++n}`;
      for (const c of clusters) {
        await must(c, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
      }
      await must(a, "POST", `/api/v1/namespaces/${ns}/services`, {
        metadata: { name: "hello", namespace: ns },
        spec: {
          selector: { app: "hello" },
          ports: [{ name: "tcp", protocol: "TCP", port: 42 }, {
            name: "udp",
            protocol: "UDP",
            port: 42,
          }],
          sessionAffinity: "ClientIP",
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 10 } },
          ...families,
        },
      });
      await must(a, "POST", `${MCS}/namespaces/${ns}/serviceexports`, {
        apiVersion: "multicluster.x-k8s.io/v1beta1",
        kind: "ServiceExport",
        metadata: { name: "hello", namespace: ns },
      });
      return ns;
    };
    const withIps = (si: Obj) => (si.spec.ips ?? []).length > 0;

    await t.step(
      "An IP should be allocated for a ClusterSetIP ServiceImport for each IP family",
      async () => {
        // Upstream's hello Service: PreferDualStack (dual-stack on a, IPv4 first).
        const ns = await exportFromA({ ipFamilyPolicy: "PreferDualStack" });
        const onA = checkFamilies(a, await awaitImport(a, ns, withIps));
        assert.deepEqual(onA.ipFamilies, ["IPv4", "IPv6"]);
        // b serves IPv4 only: its import is the IPv4 half, with b's own VIP.
        const siB = await awaitImport(b, ns, withIps);
        assert.deepEqual(checkFamilies(b, siB).ipFamilies, ["IPv4"]);
        assert.match(siB.spec.ips[0], /^10\.97\./);
        assert.equal(siB.status.conditions.find((x: Obj) => x.type === "Ready")?.status, "True");
        await checkVip(a, ns, await awaitImport(a, ns, withIps), "PreferDualStack");
        await checkVip(b, ns, siB, "SingleStack");
      },
    );

    await t.step(
      "aether: RequireDualStack with IPv6 first: the import's IPs follow its IP families' order",
      async () => {
        const ns = await exportFromA({
          ipFamilyPolicy: "RequireDualStack",
          ipFamilies: ["IPv6", "IPv4"],
        });
        const siA = await awaitImport(a, ns, withIps);
        assert.deepEqual(checkFamilies(a, siA).ipFamilies, ["IPv6", "IPv4"]);
        await checkVip(a, ns, siA, "PreferDualStack");
        assert.deepEqual(checkFamilies(b, await awaitImport(b, ns, withIps)).ipFamilies, ["IPv4"]);
        // Another import still works on b after the refused family (one reconcile, all imports).
        const ns2 = await exportFromA({});
        assert.deepEqual(checkFamilies(b, await awaitImport(b, ns2, withIps)).ipFamilies, [
          "IPv4",
        ]);
      },
    );

    await t.step(
      "aether: an IPv6-only Service is not imported with a VIP where IPv6 is not served: Ready=False IPFamilyNotSupported",
      async () => {
        const ns = await exportFromA({ ipFamilyPolicy: "SingleStack", ipFamilies: ["IPv6"] });
        assert.deepEqual(checkFamilies(a, await awaitImport(a, ns, withIps)).ipFamilies, ["IPv6"]);
        const siB = await awaitImport(
          b,
          ns,
          (si) => si.status?.conditions?.some((x: Obj) => x.type === "Ready"),
        );
        const ready = siB.status.conditions.find((x: Obj) => x.type === "Ready");
        assert.deepEqual([ready.status, ready.reason], ["False", "IPFamilyNotSupported"]);
        assert.deepEqual(siB.spec.ips ?? [], []);
        const vips = await must(b, "GET", `/api/v1/namespaces/${ns}/services`);
        assert.deepEqual(vips.items.map((s: Obj) => s.metadata.name), []);
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
