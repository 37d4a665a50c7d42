/**
 * An Envoy outlives its agent: the node-proxy DaemonSet's Envoy (or one a restarted agent
 * adopts) may have been started from an older bootstrap, without the internal-listener
 * extension and without advertising it (`aether.capabilities` in the node metadata). The current
 * agent serves such an Envoy the TCP path for the same-node mTLS hop (podIP:15008): no NACK,
 * a/client → b works over mTLS, and a later route change still applies.
 */
import assert from "node:assert/strict";
import { curlFrom } from "./mesh_harness.ts";
import { waitFor } from "./peers/proc.ts";
import { startIdentityMesh, startNodeEnvoy } from "./identity_harness.ts";
import type { EnvoyProcess } from "../agent/xds/server/_test_utils.ts";

Deno.test("mesh identity e2e: an Envoy from an older bootstrap gets the TCP hop, no NACK, routes still apply", async () => {
  let envoy: EnvoyProcess | undefined;
  const m = await startIdentityMesh(undefined, {
    node: { envoy: "none" },
    externalEnvoy: async (node) => envoy = await startNodeEnvoy(node, true),
  });
  const diag = () => `${envoy?.logs().slice(-3000)}\n${m.logs.slice(-30).join("\n")}`;
  try {
    const td = m.spire.trustDomain;
    const xfcc = new RegExp(
      `^By=spiffe://${td}/ns/b/sa/b;Hash=[0-9a-f]+;URI=spiffe://${td}/ns/a/sa/client$`,
    );
    const status = async () => await (await fetch(`http://${m.node.admin.address}/status`)).json();
    assert.deepEqual(m.node.snapshots.capabilities(m.nodeName), [], "it advertised nothing");
    const listeners = await (await fetch(`${envoy!.adminUrl}/listeners`)).text();
    assert.ok(listeners.includes("inbound|b/b-0"), listeners);
    assert.ok(!listeners.includes("inbound-internal|"), `no internal listener:\n${listeners}`);

    const r = await waitFor("a/client → b over mTLS", async () => {
      const r = await curlFrom(m.a, "b.aether.internal:8080", { path: "/hello" });
      return r.first.status === 200 ? r : undefined;
    }, 60_000).catch((e) => {
      throw new Error(`${e}\n${diag()}`);
    });
    const headers = r.first.json!.headers as Record<string, string>;
    assert.match(headers["x-forwarded-client-cert"], xfcc);
    // The hop went over TCP to b's inbound listener at b.ip:15008.
    const stats = await (await fetch(
      `${envoy!.adminUrl}/stats?filter=^listener\\.aether_inbound_b_b_0\\.downstream_cx_total`,
    )).text();
    assert.match(stats, /downstream_cx_total: [1-9]/, stats);

    // A new route applies: the config keeps updating (no NACK stuck it).
    m.objects.push({
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name: "a-to-b", namespace: "a" },
      spec: {
        parentRefs: [{ group: "", kind: "Service", name: "b", namespace: "b", port: 8080 }],
        rules: [{
          filters: [{
            type: "RequestHeaderModifier",
            requestHeaderModifier: { set: [{ name: "x-consumer", value: "a" }] },
          }],
          backendRefs: [{ name: "b", namespace: "b", port: 8080 }],
        }],
      },
    });
    await m.write();
    const routed = await waitFor("the consumer route applies", async () => {
      const r = await curlFrom(m.a, "b.aether.internal:8080", { path: "/routed" });
      const h = r.first.json?.headers as Record<string, string> | undefined;
      return h?.["x-consumer"] === "a" ? h : undefined;
    }, 60_000).catch((e) => {
      throw new Error(`${e}\n${diag()}`);
    });
    assert.match(routed["x-forwarded-client-cert"], xfcc);
    await m.node.waitReady(60_000);
    const st = await status();
    assert.equal(st.lastNack, null, JSON.stringify(st.lastNack));
    assert.equal(m.node.xds.lastNack(m.nodeName), undefined);
    assert.equal(st.ready.ready, true, st.ready.detail);
  } finally {
    await m.close();
  }
});
