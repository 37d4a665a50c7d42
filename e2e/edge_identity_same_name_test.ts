/**
 * Real SPIRE 1.13.3, a real Envoy node proxy with pods on a CNI bridge, a real edge Envoy with
 * its own SVID: two Services named `web` in namespaces one (older: it owns web.aether.internal)
 * and two (no mesh name). A Gateway route reaches two/web by namespace under the cluster
 * `web.two.aether.internal`, so the edge dials its pod at `:15008` with SNI
 * `8080.web.two.aether.internal`: the node proxy must have an inbound chain for that name (it
 * had none, and the edge's requests to two/web failed), while mesh routes still refuse two/web
 * (lib/gatewayapi/testdata/mesh_same_name_services.*).
 */
import assert from "node:assert/strict";
import { freePort, request } from "./http_client.ts";
import { sameNameRoutes } from "./harness.ts";
import { waitFor } from "./peers/proc.ts";
import { podService, startIdentityEdge, startIdentityRig } from "./identity_harness.ts";

Deno.test("edge identity e2e: the edge reaches over mTLS the pods of a Service without a mesh name", async () => {
  const rig = await startIdentityRig({
    pods: ["older", "younger"].map((key, i) => ({
      key,
      namespace: ["one", "two"][i],
      name: "web-0",
      serviceAccount: "web",
      echo: { name: key, port: 9090 },
    })),
    services: (pods) => [
      ...podService("web", "one", [pods.older.ip], 9090, {}, "2020-01-01T00:00:00Z"),
      ...podService("web", "two", [pods.younger.ip], 9090, {}, "2024-01-01T00:00:00Z"),
    ],
  });
  try {
    const port = freePort();
    const edgeLogs: string[] = [];
    const edge = await startIdentityEdge(
      [...rig.objects, ...sameNameRoutes(port, ["one", "two"])],
      rig.spire,
      edgeLogs,
    );
    try {
      await edge.waitReady(60_000);
      const td = rig.spire.trustDomain;
      for (const [ns, backend] of [["one", "older"], ["two", "younger"]]) {
        let last = "";
        const r = await waitFor(`edge → ${ns}/web over mTLS`, async () => {
          const r = await request({ port, authority: `${ns}.example.com`, timeoutMs: 5000 })
            .catch((e) => ({ status: 0, body: String(e), json: undefined }));
          last = `${r.status} ${r.body}`;
          return r.status === 200 ? r : undefined;
        }, 60_000).catch((e) => {
          throw new Error(`${e}\nlast answer: ${last}\n${edgeLogs.slice(-20).join("\n")}`);
        });
        assert.equal(r.json?.backend, backend, ns);
        // The pod's node proxy terminated the edge's mTLS with the pod's own SVID.
        const xfcc = (r.json!.headers as Record<string, string>)["x-forwarded-client-cert"];
        const by = `spiffe://${td}/ns/${ns}/sa/web`;
        assert.match(xfcc, new RegExp(`^By=${by};Hash=[0-9a-f]+;URI=${rig.spire.agentId}$`), ns);
      }
    } finally {
      await edge.close();
    }
  } finally {
    await rig.close();
  }
});
