/**
 * The outbound side of "exactly one URI SAN": a server certificate signed by the trust domain's
 * root that carries the expected SPIFFE ID **and** another URI SAN passes Envoy's exact SAN
 * matcher (any SAN may match), so the caller's node proxy must refuse it itself (502, the body
 * never reaches the app). Real SPIRE (disk UpstreamAuthority, so the test can mint leaves with the
 * trust domain's root), real Envoy node proxy, CNI bridge pods serving HTTPS on :15008.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { curlFrom } from "./mesh_harness.ts";
import { createPodNetwork } from "./netns.ts";
import { dumpOutput, type Proc, waitFor } from "./peers/proc.ts";
import { startSpire } from "./spire.ts";
import { gateway, gatewayClass, httpRoute, toYaml } from "./harness.ts";
import { freePort, request } from "./http_client.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { bundleSecretName } from "../agent/xds/translate/mod.ts";
import { UPSTREAM_URI_SAN_HEADER } from "../agent/xds/translate/mod.ts";
import {
  echoInPod,
  netPodObject,
  podService,
  startIdentityEdge,
  startIdentityNode,
} from "./identity_harness.ts";

const NODE = "node-1";

Deno.test("mesh identity e2e: a server certificate with two URI SANs is refused outbound", async () => {
  const spire = await startSpire({ upstreamCa: true });
  const net = await createPodNetwork();
  const procs: Proc[] = [];
  const dir = await Deno.makeTempDir({ prefix: "aether-identity-san-" });
  const logs: string[] = [];
  let node: Awaited<ReturnType<typeof startIdentityNode>> | undefined;
  try {
    const td = spire.trustDomain;
    const clientId = await spire.registerPod("a", "client");
    const [a, one, two] = [
      await net.addPod("aether-a"),
      await net.addPod("aether-one"),
      await net.addPod("aether-two"),
    ];
    // Servers on another node (no inbound listener of ours): HTTPS on :15008 with minted leaves.
    const oneCert = await spire.mint("srv-one", [`spiffe://${td}/ns/b/sa/one`]);
    const twoCert = await spire.mint("srv-two", [
      `spiffe://${td}/ns/b/sa/two`,
      `spiffe://${td}/ns/kube-system/sa/admin`,
    ]);
    procs.push(
      await echoInPod(one, "one", 15008, oneCert),
      await echoInPod(two, "two", 15008, twoCert),
    );
    const objects: SourceObject[] = [
      netPodObject(a, "a", "client-0", "client", NODE),
      netPodObject(one, "b", "one-0", "one", "node-elsewhere"),
      netPodObject(two, "b", "two-0", "two", "node-elsewhere"),
      ...podService("one", "b", [one.ip], 9090),
      ...podService("two", "b", [two.ip], 9090),
    ];
    await Deno.writeTextFile(join(dir, "mesh.yaml"), toYaml(...objects));
    node = await startIdentityNode(dir, NODE, spire, logs);
    const n = node;
    const diag = () => `${dumpOutput([...spire.procs, ...procs])}\n${logs.slice(-30).join("\n")}`;
    await waitFor("a/client's SVID and the bundle", () => {
      const names = n.snapshots.resources(NODE)?.secrets.map((s) => s.name) ?? [];
      const want = [clientId, bundleSecretName(td)];
      return Promise.resolve(want.every((w) => names.includes(w)) ? true : undefined);
    }, 90_000);
    await n.waitReady(60_000);

    // Control: a minted leaf with exactly the expected ID is accepted (the setup works).
    const ok = await waitFor("a → one over mTLS", async () => {
      const r = await curlFrom(a, "one.aether.internal:8080");
      return r.first.status === 200 ? r : undefined;
    }, 60_000).catch((e) => {
      throw new Error(`${e}\n${diag()}`);
    });
    assert.equal(ok.first.json!.backend, "one");
    assert.equal(ok.first.headers[UPSTREAM_URI_SAN_HEADER], undefined, "internal header removed");

    // The same CA, the expected ID plus another URI SAN: refused by the caller's proxy.
    // Poll until an answer comes from the server side (200: accepted, 502: refused); a 503 while
    // the path warms up is neither.
    const bad = await waitFor("a → two answered", async () => {
      const r = await curlFrom(a, "two.aether.internal:8080");
      return r.first.status === 200 || r.first.status === 502 ? r : undefined;
    }, 60_000);
    assert.equal(bad.first.status, 502, JSON.stringify(bad.first));
    assert.match(bad.first.body, /more than one URI SAN/);
    assert.equal(bad.first.json?.backend, undefined, "the server's answer never reaches the app");
    assert.equal(bad.first.headers[UPSTREAM_URI_SAN_HEADER], undefined);

    // The edge is a mesh client too: its clusters carry the same check.
    const port = freePort();
    const edgeLogs: string[] = [];
    const edge = await startIdentityEdge(
      [
        ...objects,
        gatewayClass(),
        gateway("gw", [{ name: "http", protocol: "HTTP", port }], "b"),
        httpRoute("to-servers", {
          parentRefs: [{ name: "gw" }],
          rules: [
            {
              matches: [{ path: { type: "PathPrefix", value: "/one" } }],
              backendRefs: [{ name: "one", port: 8080 }],
            },
            { backendRefs: [{ name: "two", port: 8080 }] },
          ],
        }, "b"),
      ],
      spire,
      edgeLogs,
    );
    try {
      await edge.waitReady(60_000);
      await waitFor("edge → one", async () => {
        const r = await request({ port, authority: "edge.test", path: "/one", timeoutMs: 5000 });
        return r.status === 200 && r.json?.backend === "one" ? r : undefined;
      }, 60_000).catch((e) => {
        throw new Error(`${e}\n${edgeLogs.slice(-20).join("\n")}`);
      });
      const r = await waitFor("edge → two answered", async () => {
        const r = await request({ port, authority: "edge.test", path: "/two", timeoutMs: 5000 });
        return r.status === 200 || r.status === 502 ? r : undefined;
      }, 60_000);
      assert.equal(r.status, 502, JSON.stringify(r));
      assert.match(r.body, /more than one URI SAN/);
    } finally {
      await edge.close();
    }
  } finally {
    await node?.close();
    for (const p of procs.reverse()) await p.stop();
    await net.remove();
    await spire.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
