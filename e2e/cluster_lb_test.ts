/**
 * The local cluster's LoadBalancer implementation (MetalLB's controller, testbed/cluster/metallb.ts):
 * a Service of type LoadBalancer gets an address from the pool, and a request from the host to that
 * address reaches the Service's pod (routed into the node netns, answered by kube-proxy).
 */
import assert from "node:assert/strict";
import { imageNames, withCluster } from "../testbed/cluster/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { request } from "./http_client.ts";
import { echoApp } from "./cluster_fixtures.ts";
import { waitFor } from "./cluster_ha.ts";
import { kubectl } from "./kubectl.ts";

/** Whether an IPv4 address lies in `cidr`. */
function inCidr(ip: string, cidr: string): boolean {
  const n = (a: string) => a.split(".").reduce((acc, o) => acc * 256 + Number(o), 0);
  const [base, bits] = cidr.split("/");
  const size = 2 ** (32 - Number(bits));
  return Math.floor(n(ip) / size) === Math.floor(n(base) / size);
}

const app = (ns: string, echo: string) =>
  `apiVersion: v1\nkind: Namespace\nmetadata: {name: ${ns}}\n---\n` +
  echoApp({ name: "echo", namespace: ns, image: echo, serviceType: "LoadBalancer", port: 8081 });

Deno.test({
  name:
    "local cluster LoadBalancer: a Service gets a pool address that reaches its pod from the host",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async () => {
    await ensurePeer("kubectl");
    await withCluster(async (c) => {
      const k = (args: string[], stdin?: string) => kubectl(c.kubeconfig, args, stdin);
      const ns = `lb-${crypto.randomUUID().slice(0, 8)}`;
      try {
        await k(["apply", "-f", "-"], app(ns, imageNames.echoBasic));
        const ip = await waitFor("status.loadBalancer.ingress", async () => {
          const svc = JSON.parse(await k(["-n", ns, "get", "service", "echo", "-o", "json"]));
          return svc.status?.loadBalancer?.ingress?.[0]?.ip as string | undefined;
        });
        assert.ok(inCidr(ip, c.layout.lbCidr), `${ip} is in the pool ${c.layout.lbCidr}`);
        await k(["-n", ns, "rollout", "status", "deployment/echo", "--timeout=180s"]);
        const r = await waitFor(`GET http://${ip}:8081/`, async () => {
          const r = await request({ host: ip, port: 8081, authority: "lb.test", timeoutMs: 5_000 });
          return r.status === 200 ? r : undefined;
        }, 60_000);
        assert.match(String(r.json?.pod), /^echo-/);
        assert.equal(r.json?.namespace, ns);
      } finally {
        await k(["delete", "namespace", ns, "--ignore-not-found", "--wait=false"]).catch(() => {});
      }
    });
  },
});
