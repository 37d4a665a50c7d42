/**
 * charts/aether deploys the east-west gateway (multicluster.eastWestGateway.enabled): rendered with
 * the real helm, its ServiceAccount (no API token), Deployment (`agent east-west-gateway` on the
 * pod IP from the downward API, Envoy in the same container, readiness on its admin /readyz) and
 * Service; the controller's --east-west-gateway from `address`, from the Service's loadBalancerIP,
 * or from the string form of earlier charts (which deploys nothing); values the gateway or the
 * controller would refuse fail to render; the objects pass `kubectl apply --dry-run=server`; and the
 * rendered command line, run as it is (the pod IP 127.0.0.1), starts a gateway with a real Envoy
 * and a real registry etcd that becomes ready and listens on the rendered address.
 */
import { join } from "node:path";
import { parseAllDocuments } from "yaml";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer, projectRoot } from "../testbed/peers/mod.ts";
import { freePorts } from "../testbed/free_port.ts";
import { type Kube, startKube } from "./peers/kube.ts";
import { startEtcd } from "./peers/etcd.ts";
import { exec, type Proc, spawn, waitFor } from "./peers/proc.ts";
import { EtcdKv, OriginWriter } from "../lib/registry/mod.ts";
import { endpointRecords } from "../lib/mcs/mod.ts";
import { Logger } from "../lib/log/mod.ts";

const chart = join(projectRoot, "charts", "aether");
const NS = "aether-system";
const GW = "aether-east-west-gateway";
// deno-lint-ignore no-explicit-any
type Any = any;

const CLUSTERSET = [
  "--set=multicluster.registryUrl=http://registry-etcd:2379",
  "--set=multicluster.region=eu",
  "--set=multicluster.cluster=east",
];

async function render(helm: string, sets: string[]): Promise<Any[]> {
  const r = await exec(helm, ["template", "aether", chart, "-n", NS, ...sets]);
  assertEquals(r.code, 0, r.stderr);
  return parseAllDocuments(r.stdout).map((d) => d.toJS()).filter(Boolean);
}

const find = (docs: Any[], kind: string, name: string) =>
  docs.find((d) => d.kind === kind && d.metadata.name === name);

function controllerArgs(docs: Any[]): string[] {
  return find(docs, "Deployment", "aether-controller").spec.template.spec.containers[0].args;
}

const ewFlag = (docs: Any[]) => controllerArgs(docs).filter((a) => a.startsWith("--east-west"));

Deno.test("helm chart: the east-west gateway deployed, its address published, values checked", async (t) => {
  const helm = await ensurePeer("helm");
  const dir = await Deno.makeTempDir({ prefix: "aether-chart-ew-" });
  let kube: Kube | undefined;
  const procs: Proc[] = [];
  const writers: OriginWriter[] = [];
  try {
    await t.step("helm lint with the gateway", async () => {
      const r = await exec(helm, [
        "lint",
        chart,
        ...CLUSTERSET,
        "--set=multicluster.eastWestGateway.enabled=true",
      ]);
      assertEquals(r.code, 0, r.stdout + r.stderr);
    });

    const docs = await render(helm, [
      ...CLUSTERSET,
      "--set=multicluster.eastWestGateway.enabled=true",
      "--set=multicluster.eastWestGateway.service.loadBalancerIP=192.0.2.7",
      "--set=multicluster.eastWestGateway.service.annotations.example\\.com/pool=east-west",
      "--set=multicluster.eastWestGateway.replicas=3",
    ]);

    await t.step("rendered: ServiceAccount, Deployment, Service", () => {
      const sa = find(docs, "ServiceAccount", GW);
      assertEquals(sa.metadata.namespace, NS);
      assertEquals(sa.automountServiceAccountToken, false);
      const deploy = find(docs, "Deployment", GW);
      assertEquals(deploy.metadata.namespace, NS);
      assertEquals(deploy.spec.replicas, 3);
      const pod = deploy.spec.template.spec;
      assertEquals(pod.serviceAccountName, GW);
      assertEquals(pod.automountServiceAccountToken, false, "the gateway reads no API");
      assertEquals(pod.hostNetwork, undefined);
      const [c, ...others] = pod.containers;
      assertEquals(others, [], "Envoy runs in the same container");
      assertEquals(c.image, "aether.local/aether:dev");
      assertEquals(c.args, [
        "agent/main.ts",
        "east-west-gateway",
        "--registry-url=http://registry-etcd:2379",
        "--region=eu",
        "--cluster=east",
        "--listen=[$(POD_IP)]:15443",
        "--admin-address=[$(POD_IP)]:15000",
        "--mesh-domain=aether.internal",
        "--envoy=auto",
      ]);
      assert(!JSON.stringify(c.args).includes("0.0.0.0"), "never every address");
      const podIp = c.env.find((e: Any) => e.name === "POD_IP");
      assertEquals(podIp.valueFrom.fieldRef.fieldPath, "status.podIP");
      assert(c.env.some((e: Any) => e.name === "DENO_V8_FLAGS"), JSON.stringify(c.env));
      assertEquals(c.ports, [
        { name: "east-west", containerPort: 15443 },
        { name: "admin", containerPort: 15000 },
      ]);
      assertEquals(c.readinessProbe.httpGet, { path: "/readyz", port: "admin" });
      assertEquals(c.livenessProbe.httpGet, { path: "/healthz", port: "admin" });
      assertEquals(c.resources.limits.memory, "512Mi");
      assertEquals(c.securityContext.capabilities, { drop: ["ALL"] }, "15443 needs no capability");
      // The Deployment's selector is the pods' labels, and the Service selects the same pods.
      const labels = deploy.spec.template.metadata.labels;
      for (const [k, v] of Object.entries(deploy.spec.selector.matchLabels)) {
        assertEquals(labels[k], v);
      }
      const svc = find(docs, "Service", GW);
      assertEquals(svc.metadata.namespace, NS);
      assertEquals(svc.spec.selector, deploy.spec.selector.matchLabels);
      assertEquals(svc.spec.type, "LoadBalancer");
      assertEquals(svc.spec.loadBalancerIP, "192.0.2.7");
      assertEquals(svc.metadata.annotations, { "example.com/pool": "east-west" });
      assertEquals(svc.spec.ports, [
        { name: "east-west", port: 15443, targetPort: "east-west", protocol: "TCP" },
      ]);
      // No address given: the controller publishes the LoadBalancer IP the Service asks for.
      assertEquals(ewFlag(docs), ["--east-west-gateway=192.0.2.7:15443"]);
    });

    await t.step(
      "the controller's address: given, derived, the old string form, none",
      async () => {
        const off = await render(helm, CLUSTERSET);
        assertEquals(find(off, "Deployment", GW), undefined, "off by default");
        assertEquals(ewFlag(off), []);
        // An address given wins over the Service's loadBalancerIP (e.g. a NAT in front).
        const given = await render(helm, [
          ...CLUSTERSET,
          "--set=multicluster.eastWestGateway.enabled=true",
          "--set=multicluster.eastWestGateway.address=198.51.100.4:443",
          "--set=multicluster.eastWestGateway.service.loadBalancerIP=192.0.2.7",
        ]);
        assertEquals(ewFlag(given), ["--east-west-gateway=198.51.100.4:443"]);
        // The string form of earlier charts: the address only, nothing deployed.
        const old = await render(helm, [
          ...CLUSTERSET,
          "--set=multicluster.eastWestGateway=192.0.2.8:15443",
        ]);
        assertEquals(ewFlag(old), ["--east-west-gateway=192.0.2.8:15443"]);
        assertEquals(old.filter((d) => d.metadata.name === GW), []);
        // The address only, in the table form: published, nothing deployed.
        const addressOnly = await render(helm, [
          ...CLUSTERSET,
          "--set=multicluster.eastWestGateway.address=192.0.2.9:15443",
        ]);
        assertEquals(ewFlag(addressOnly), ["--east-west-gateway=192.0.2.9:15443"]);
        assertEquals(addressOnly.filter((d) => d.metadata.name === GW), []);
        // An IPv6 loadBalancerIP is bracketed; a LoadBalancer that picks the IP itself: no
        // address until it is set (flat records meanwhile).
        const v6 = await render(helm, [
          ...CLUSTERSET,
          "--set=multicluster.eastWestGateway.enabled=true",
          "--set=multicluster.eastWestGateway.service.loadBalancerIP=2001:db8::7",
        ]);
        assertEquals(ewFlag(v6), ["--east-west-gateway=[2001:db8::7]:15443"]);
        const pending = await render(helm, [
          ...CLUSTERSET,
          "--set=multicluster.eastWestGateway.enabled=true",
        ]);
        assert(find(pending, "Deployment", GW));
        assertEquals(ewFlag(pending), []);
        // A privileged port, NodePort, another admin port.
        const low = await render(helm, [
          ...CLUSTERSET,
          "--set=multicluster.eastWestGateway.enabled=true",
          "--set=multicluster.eastWestGateway.port=443",
          "--set=multicluster.eastWestGateway.adminPort=15100",
          "--set=multicluster.eastWestGateway.service.type=NodePort",
        ]);
        const c = find(low, "Deployment", GW).spec.template.spec.containers[0];
        assertEquals(c.securityContext.capabilities, { drop: ["ALL"], add: ["NET_BIND_SERVICE"] });
        assert(c.args.includes("--listen=[$(POD_IP)]:443"), c.args.join(" "));
        assert(c.args.includes("--admin-address=[$(POD_IP)]:15100"), c.args.join(" "));
        const svc = find(low, "Service", GW);
        assertEquals([svc.spec.type, svc.spec.ports[0].port], ["NodePort", 443]);
      },
    );

    await t.step("values the gateway or the controller would refuse do not render", async () => {
      const on = "--set=multicluster.eastWestGateway.enabled=true";
      for (
        const [sets, message] of [
          [[on], "needs multicluster.registryUrl"],
          [[...CLUSTERSET, on, "--set=multicluster.eastWestGateway.port=0"], "port must be a port"],
          [
            [...CLUSTERSET, on, "--set=multicluster.eastWestGateway.adminPort=70000"],
            "adminPort must be a port",
          ],
          [
            [...CLUSTERSET, on, "--set=multicluster.eastWestGateway.adminPort=15443"],
            "must differ",
          ],
          [
            [...CLUSTERSET, on, "--set=multicluster.eastWestGateway.service.type=ExternalName"],
            "LoadBalancer, NodePort or ClusterIP",
          ],
          [
            [
              ...CLUSTERSET,
              on,
              "--set=multicluster.eastWestGateway.service.type=ClusterIP",
              "--set=multicluster.eastWestGateway.service.loadBalancerIP=192.0.2.7",
            ],
            "needs service.type LoadBalancer",
          ],
          [
            [...CLUSTERSET, "--set=multicluster.eastWestGateway.address=gw.example.com:15443"],
            "must be <ip>:<port>",
          ],
          [
            [...CLUSTERSET, "--set=multicluster.eastWestGateway=192.0.2.7"],
            "must be <ip>:<port>",
          ],
        ] as const
      ) {
        const r = await exec(helm, ["template", "aether", chart, ...sets]);
        assert(r.code !== 0 && r.stderr.includes(message), `${sets.join(" ")}: ${r.stderr}`);
      }
    });

    await t.step("kubectl apply --dry-run=server of the gateway's objects", async () => {
      kube = await startKube(dir);
      const k = kube;
      const kubectl = await ensurePeer("kubectl");
      const created = await k.request("POST", "/api/v1/namespaces", { metadata: { name: NS } });
      assertEquals(created.status, 201);
      const objects = docs.filter((d) => d.metadata.name === GW);
      assertEquals(objects.map((d) => d.kind).sort(), ["Deployment", "Service", "ServiceAccount"]);
      const file = join(dir, "east-west.yaml");
      await Deno.writeTextFile(file, objects.map((d) => JSON.stringify(d)).join("\n---\n"));
      const dry = await exec(kubectl, [
        "--kubeconfig",
        k.kubeconfig,
        "apply",
        "--dry-run=server",
        "-f",
        file,
      ]);
      assertEquals(dry.code, 0, dry.stderr);
      assertEquals(dry.stdout.trim().split("\n").length, 3, dry.stdout);
      assert(dry.stdout.split("\n").every((l) => !l || l.includes("(server dry run)")), dry.stdout);
      await k.stop();
      kube = undefined;
    });

    await t.step("the rendered command line starts a ready gateway on the pod IP", async () => {
      const registry = await startEtcd(join(dir, "registry"));
      try {
        const [port, adminPort] = freePorts(2);
        const out = await render(helm, [
          `--set=multicluster.registryUrl=${registry.url}`,
          "--set=multicluster.region=eu",
          "--set=multicluster.cluster=east",
          "--set=multicluster.eastWestGateway.enabled=true",
          `--set=multicluster.eastWestGateway.port=${port}`,
          `--set=multicluster.eastWestGateway.adminPort=${adminPort}`,
        ]);
        const c = find(out, "Deployment", GW).spec.template.spec.containers[0];
        // The kubelet's expansion of $(POD_IP), with this host's loopback as the pod's IP.
        const args = (c.args as string[]).map((a) => a.replaceAll("$(POD_IP)", "127.0.0.1"));
        const env: Record<string, string> = { XDG_STATE_HOME: join(dir, "state") };
        for (const e of c.env as { name: string; value?: string }[]) {
          if (e.value !== undefined) env[e.name] = e.value;
        }
        // The image's entrypoint: deno run -A --cached-only, in the project's folder.
        const gw = spawn(
          "east-west-gateway",
          Deno.execPath(),
          ["run", "-A", "--cached-only", ...args],
          projectRoot,
          env,
        );
        procs.push(gw);
        const admin = `http://127.0.0.1:${adminPort}`;
        await waitFor(
          "the gateway's /readyz (its Envoy accepted the configuration)",
          async () => {
            const r = await fetch(`${admin}/readyz`, { signal: AbortSignal.timeout(5000) });
            await r.body?.cancel();
            return r.status === 200 ? true : undefined;
          },
          180_000,
          procs,
        );
        const status = await (await fetch(`${admin}/status`)).json();
        assertEquals(status.eastWest.cluster, "east.eu");
        assertEquals(status.eastWest.listen, `[127.0.0.1]:${port}`);
        // This cluster (east.eu, the rendered --region and --cluster) exports shop/web: the
        // gateway takes its records and its Envoy listens on the rendered address.
        const writer = new OriginWriter({
          kv: new EtcdKv({ url: registry.url }),
          origin: { region: "eu", cluster: "east" },
          writer: "chart-test",
          logger: new Logger("writer", () => {}),
        });
        writers.push(writer);
        await writer.publish(endpointRecords(
          "east.eu",
          new Set(["shop/web"]),
          [{
            metadata: { namespace: "shop", labels: { "kubernetes.io/service-name": "web" } },
            addressType: "IPv4",
            ports: [{ name: "http", protocol: "TCP", port: 8080 }],
            endpoints: [{ addresses: ["10.1.2.3"], targetRef: { kind: "Pod", name: "web-0" } }],
          }],
          new Map(),
          undefined,
          new Map([["shop/web", [{ name: "http", protocol: "TCP", port: 80 }]]]),
        ));
        const sni = "80.web.shop.svc.clusterset.local";
        await waitFor(
          `${sni} in the gateway's /status`,
          async () => {
            const s = await (await fetch(`${admin}/status`)).json();
            return JSON.stringify(s.eastWest.routes[sni]) === '["10.1.2.3"]' ? true : undefined;
          },
          60_000,
          procs,
        );
        await waitFor(
          `a connection to 127.0.0.1:${port}`,
          async () => {
            const conn = await Deno.connect({ hostname: "127.0.0.1", port });
            conn.close();
            return true;
          },
          60_000,
          procs,
        );
      } finally {
        for (const w of writers.splice(0)) await w.stop();
        for (const p of procs.splice(0)) await p.stop();
        await registry.stop();
      }
    });
  } finally {
    for (const w of writers) await w.stop();
    for (const p of procs) await p.stop();
    await kube?.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
