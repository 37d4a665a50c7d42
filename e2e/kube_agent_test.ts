/**
 * `agent standalone --kubeconfig`: a real kube-apiserver (Gateway API CRDs installed) feeds the
 * agent, which programs a real Envoy: a route created through the API server serves, an edit made
 * through it applies, and the Gateway's status (/status) says Programmed.
 */
import { join } from "node:path";
import { assert, assertEquals } from "../testbed/assert.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { Logger } from "../lib/log/mod.ts";
import { runStandalone, standaloneDefaults } from "../agent/edge/mod.ts";
import { installCrds, startKube } from "./peers/kube.ts";
import { freePort, gateway, gatewayClass, httpRoute, waitFor } from "./harness.ts";
import { request } from "./http_client.ts";

Deno.test("agent standalone --kubeconfig: config from a real API server to a real Envoy", async () => {
  const dir = await Deno.makeTempDir({ prefix: "aether-kube-agent-" });
  const kube = await startKube(dir);
  const logs: string[] = [];
  try {
    await installCrds(kube, join(await ensurePeer("gateway-api-crds"), "standard"));
    const post = async (path: string, body: unknown) => {
      const res = await kube.request("POST", path, body);
      assert(res.status === 201, `${path}: ${JSON.stringify(res.json)}`);
    };
    const gw = "/apis/gateway.networking.k8s.io/v1";
    const port = freePort();
    await post(`${gw}/gatewayclasses`, gatewayClass());
    await post(
      `${gw}/namespaces/default/gateways`,
      gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
    );
    const route = httpRoute("web", {
      parentRefs: [{ name: "gw" }],
      hostnames: ["web.example.com"],
      // A redirect needs no backend (the API server refuses loopback endpoint addresses).
      rules: [{
        filters: [{
          type: "RequestRedirect",
          requestRedirect: { hostname: "elsewhere.example.com", statusCode: 302 },
        }],
      }],
    });
    delete (route.metadata as Record<string, unknown>).creationTimestamp;
    delete (route.metadata as Record<string, unknown>).generation;
    await post(`${gw}/namespaces/default/httproutes`, route);

    const agent = await runStandalone({
      ...standaloneDefaults,
      kubeconfig: kube.kubeconfig,
      envoy: await ensurePeer("envoy"),
      adminAddress: "127.0.0.1:0",
      xdsAddress: "127.0.0.1:0",
      dnsAddress: "none",
      nodeId: `kube-${crypto.randomUUID().slice(0, 8)}`,
      logger: new Logger("agent", (l) => logs.push(l), "info"),
    });
    try {
      await agent.waitReady(60_000);
      const get = () => request({ port, authority: "web.example.com", path: "/" });
      await waitFor(
        "route served",
        async () => (await get().catch(() => undefined))?.status === 302,
        60_000,
      );
      // deno-lint-ignore no-explicit-any
      const gwStatus: any = agent.engine.status.objects.find((o) => o.kind === "Gateway")?.status;
      assert(
        // deno-lint-ignore no-explicit-any
        gwStatus.conditions.some((c: any) => c.type === "Programmed" && c.status === "True"),
        JSON.stringify(gwStatus),
      );
      const patched = await kube.request("PATCH", `${gw}/namespaces/default/httproutes/web`, {
        spec: { hostnames: ["moved.example.com"] },
      });
      assertEquals(patched.status, 200);
      await waitFor("edit applied", async () => (await get()).status === 404, 60_000);
      const moved = await request({ port, authority: "moved.example.com", path: "/" });
      assertEquals(moved.status, 302);
      assertEquals(moved.headers.location, `http://elsewhere.example.com:${port}/`);
      assert(logs.some((l) => l.includes("reading configuration from the API server")));
    } finally {
      await agent.close();
    }
  } catch (e) {
    console.error(logs.slice(-30).join("\n"));
    throw e;
  } finally {
    await kube.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
