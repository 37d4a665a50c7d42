/**
 * Identity in the cluster, end to end: aether installed by its chart with identity on brings SPIRE
 * (spire-server with aether's registrar, a spire-agent per node attesting with k8s_psat and the
 * kubelet), the node agent gets its pods' SVIDs as the SPIRE agent's authorized delegate, and an
 * unmodified pod's call to a mesh Service crosses the node proxy over SPIFFE mTLS: the backend sees
 * XFCC with both SPIFFE IDs. A plaintext connection to a pod's :15008 is refused; a captured pod
 * still reaches the API server; a raw TCP Service works through the TCP floor over mTLS. Under 100
 * req/s of captured mTLS load: the SPIRE server pod deleted, the node's SPIRE agent pod deleted (the
 * node agent re-subscribes) and two SVID rotations (90 s TTL), each with 0 failed requests, the
 * rotations pushing secrets only (e2e/cluster_identity_steps.ts).
 */
import assert from "node:assert/strict";
import { withCluster } from "../testbed/cluster/mod.ts";
import { installCapture, statSum, wgetEcho } from "./cluster_capture.ts";
import { waitFor } from "./cluster_ha.ts";
import {
  newPodsServeMtls,
  rotationsUnderLoad,
  spireAgentDeleted,
  spireServerDeleted,
} from "./cluster_identity_steps.ts";

const TD = "cluster.local";
const re = (s: string) => s.replaceAll(".", "\\.");

Deno.test({
  name: "local cluster, identity: SPIRE with the chart, pod → pod over SPIFFE mTLS",
  sanitizeOps: false,
  sanitizeResources: false,
  fn: async (t) => {
    await withCluster(async (c) => {
      // A short SVID lifetime: rotations every 45 s (SPIRE renews at half-life).
      const env = await installCapture(c, ["identity.enabled=true", "identity.svidTtl=90s"]);
      const { app, consumer } = env.ns;
      const ready = performance.now();
      try {
        await t.step(
          "a captured call carries XFCC with the caller's and the callee's IDs",
          async () => {
            const url = `http://web.${app}.svc.cluster.local:8080/xfcc`;
            const by = `spiffe://${TD}/ns/${app}/sa/default`;
            const uri = `spiffe://${TD}/ns/${consumer}/sa/default`;
            const echoed = await waitFor("a call with XFCC", async () => {
              const e = await wgetEcho(env, consumer, "client", url).catch(() => undefined);
              return e?.headers["x-forwarded-client-cert"] ? e : undefined;
            }, 120_000);
            console.log(
              `first mTLS answer ${
                Math.round(performance.now() - ready)
              } ms after the pods were Ready`,
            );
            assert.match(
              echoed.headers["x-forwarded-client-cert"],
              new RegExp(`^By=${re(by)};Hash=[0-9a-f]+;URI=${re(uri)}$`),
            );
            assert.equal(echoed.headers["x-route"], "consumer");
          },
        );

        await t.step("a plaintext connection to a pod's :15008 is refused", async () => {
          const web = (await env.json(["-n", app, "get", "pods", "-l", "app=web"])).items[0];
          const url = `http://${web.status.podIP}:15008/plaintext`;
          const r = await env.exec(app, "client", [
            "/bin/sh",
            "-c",
            `wget -q -T 5 -O - ${url} >/dev/null 2>&1; echo "exit=$?"`,
          ]);
          assert.match(r, /exit=[1-9]/, `plaintext to ${url} must fail: ${r}`);
          // The same pod answers mTLS through the mesh (the port is there, only plaintext fails).
          const e = await wgetEcho(env, app, "client", `http://web.${app}:8080/mtls`);
          assert.ok(e.headers["x-forwarded-client-cert"], JSON.stringify(e.headers));
        });

        await t.step(
          "a captured pod still reaches the API server (its own TLS, no mesh pod)",
          async () => {
            const out = await env.exec(app, "echo-client", [
              "client",
              "--insecure-skip-verify",
              "https://kubernetes.default.svc/version",
            ]);
            // Anonymous requests are refused by the API server: any HTTP status shows the TLS
            // session reached it through the capture.
            assert.match(out, /StatusCode=\d{3}/, out);
          },
        );

        await t.step("a raw TCP Service through the TCP floor, over mTLS", async () => {
          const handshakes = () => statSum(c, "^listener\\.aether_inbound", ".ssl.handshake");
          const before = await handshakes();
          for (const port of [9000, 9090]) {
            const out = await env.exec(app, "echo-client", ["client", `tcp://tcp-echo:${port}`]);
            assert.match(out, /\[0 body\] StatusCode=200/, `tcp-echo:${port}: ${out}`);
          }
          const after = await handshakes();
          assert.ok(
            after - before >= 2,
            `TLS handshakes on the pods' inbound: ${before} → ${after}`,
          );
        });

        const vip = (await env.json(["-n", app, "get", "service", "web"])).spec.clusterIP as string;
        await t.step(
          "SPIRE server pod deleted under load: 0 failed",
          () => spireServerDeleted(env, c, vip),
        );
        await t.step(
          "SPIRE agent pod deleted under load: 0 failed, re-subscribed",
          () => spireAgentDeleted(env, c, vip),
        );
        await t.step(
          "two SVID rotations under load: 0 failed, secrets pushed only",
          () => rotationsUnderLoad(env, c, vip),
        );
        await t.step(
          // Each has a Service and an identity of its own; the client's calls make the node proxy
          // build mTLS clusters for the client only (per-caller demand), not for 50 identities ×
          // every Service (that took its Envoy past 512Mi).
          "50 new pods of new identities serve mTLS, each within 300 s",
          () => newPodsServeMtls(env, c, 50, 300),
        );
      } finally {
        await env.cleanup();
      }
    });
  },
});
