/**
 * SPIFFE mTLS on the mesh hop, end to end: real SPIRE server + agent, real Envoy node proxy,
 * pods on a CNI bridge. A pod in namespace a (service account client) calls service b: the
 * backend sees XFCC By=<b's ID>;…;URI=<a/client's ID>, GAMMA consumer routes (weights, header
 * edit, timeout) still apply; refused: plaintext to :15008, a client certificate of another
 * trust domain, an endpoint presenting another service account's SVID, a forged XFCC; a pod
 * outside the mesh (opted out of capture) is reached in plaintext at its own port.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { bundleSecretName } from "../agent/xds/translate/mod.ts";
import { gateway, gatewayClass, httpRoute, toYaml } from "./harness.ts";
import { freePort, request } from "./http_client.ts";
import { curlFrom } from "./mesh_harness.ts";
import { createPodNetwork, type NetPod } from "./netns.ts";
import { dumpOutput, exec, type Proc, waitFor } from "./peers/proc.ts";
import { startSpire } from "./spire.ts";
import { selfSigned } from "./tls.ts";
import { startEcho } from "./echo/server.ts";
import { PLAINTEXT_ANNOTATION } from "../agent/identity/mod.ts";
import { CAPTURE_ANNOTATION } from "../cni/mod.ts";
import {
  echoInPod,
  netPodObject,
  podService,
  secretPem,
  startIdentityEdge,
  startIdentityNode,
} from "./identity_harness.ts";

const NODE = "node-1";

/** curl inside `pod`; returns exit code and stdout. */
async function curlIn(pod: NetPod, args: string[]) {
  const [ip, curl] = [await ensurePeer("ip"), await ensurePeer("curl")];
  return await exec(ip, ["netns", "exec", pod.netns, curl, "-s", "--max-time", "5", ...args]);
}

Deno.test("mesh identity e2e: SPIFFE mTLS hop with XFCC, GAMMA over mTLS, refusals", async (t) => {
  const spire = await startSpire({ upstreamCa: true });
  const net = await createPodNetwork();
  const procs: Proc[] = [];
  const dir = await Deno.makeTempDir({ prefix: "aether-identity-" });
  const logs: string[] = [];
  let node: Awaited<ReturnType<typeof startIdentityNode>> | undefined;
  let bareEcho: Awaited<ReturnType<typeof startEcho>> | undefined;
  try {
    const td = spire.trustDomain;
    const clientId = await spire.registerPod("a", "client");
    const bId = await spire.registerPod("b", "b");
    await spire.registerPod("b", "b2");
    const [a, b, b2, imp, out] = [
      await net.addPod("aether-a"),
      await net.addPod("aether-b"),
      await net.addPod("aether-b2"),
      await net.addPod("aether-imp"),
      await net.addPod("aether-out"),
    ];
    procs.push(
      await echoInPod(b, "b", 9090),
      await echoInPod(b2, "b2", 9090),
      await echoInPod(out, "out", 9090),
    );
    // A backend that is no pod (bare metal: the bridge's host-side address): no identity.
    const bare = await startEcho("bare", net.gateway, 0);
    bareEcho = bare;
    const objects = [
      netPodObject(a, "a", "client-0", "client", NODE),
      netPodObject(b, "b", "b-0", "b", NODE),
      netPodObject(b2, "b", "b2-0", "b2", NODE),
      // The impostor runs elsewhere (no inbound listener of ours): its endpoint must be b/imp.
      netPodObject(imp, "b", "imp-0", "imp", "node-elsewhere"),
      ...podService("b", "b", [b.ip], 9090),
      ...podService("b-v2", "b", [b2.ip], 9090),
      ...podService("imp", "b", [imp.ip], 9090),
      ...podService("bare", "b", [net.gateway], bare.port),
      ...podService("bare-ok", "b", [net.gateway], bare.port, { [PLAINTEXT_ANNOTATION]: "allow" }),
      // A pod opted out of capture: outside the mesh, no :15008 anywhere; no plaintext opt-in.
      {
        ...netPodObject(out, "b", "out-0", "out", "node-elsewhere"),
        metadata: { name: "out-0", namespace: "b", annotations: { [CAPTURE_ANNOTATION]: "false" } },
      },
      ...podService("out", "b", [out.ip], 9090),
      {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: "a-to-b", namespace: "a" },
        spec: {
          parentRefs: [{ group: "", kind: "Service", name: "b", namespace: "b", port: 8080 }],
          rules: [
            {
              matches: [{ path: { type: "PathPrefix", value: "/slow" } }],
              timeouts: { request: "500ms" },
              backendRefs: [{ name: "b", namespace: "b", port: 8080 }],
            },
            {
              filters: [{
                type: "RequestHeaderModifier",
                requestHeaderModifier: { set: [{ name: "x-consumer", value: "a" }] },
              }],
              backendRefs: [
                { name: "b", namespace: "b", port: 8080, weight: 1 },
                { name: "b-v2", namespace: "b", port: 8080, weight: 1 },
              ],
            },
          ],
        },
      },
      {
        apiVersion: "gateway.networking.k8s.io/v1beta1",
        kind: "ReferenceGrant",
        metadata: { name: "from-a", namespace: "b" },
        spec: {
          from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "a" }],
          to: [{ group: "", kind: "Service" }],
        },
      },
    ];
    await Deno.writeTextFile(join(dir, "mesh.yaml"), toYaml(...objects));
    node = await startIdentityNode(dir, NODE, spire, logs);
    const n = node;
    const diag = () => `${dumpOutput([...spire.procs, ...procs])}\n${logs.slice(-30).join("\n")}`;
    await waitFor("SVIDs of the node's three identities", () => {
      const names = n.snapshots.resources(NODE)?.secrets.map((s) => s.name) ?? [];
      const want = [clientId, bId, `spiffe://${td}/ns/b/sa/b2`, bundleSecretName(td)];
      return Promise.resolve(want.every((w) => names.includes(w)) ? true : undefined);
    }, 90_000);
    await n.waitReady(60_000);

    const xfcc = new RegExp(
      `^By=${bId.replaceAll(".", "\\.")};Hash=[0-9a-f]+;URI=${clientId.replaceAll(".", "\\.")}$`,
    );

    await t.step("a/client → b: XFCC By=b, URI=a/client; consumer route applies", async () => {
      const r = await waitFor("b over mTLS", async () => {
        const r = await curlFrom(a, "b.aether.internal:8080", { path: "/hello" });
        return r.first.status === 200 ? r : undefined;
      }, 60_000).catch((e) => {
        throw new Error(`${e}\n${diag()}`);
      });
      const headers = r.first.json!.headers as Record<string, string>;
      const backend = r.first.json!.backend as string;
      const expectBy = backend === "b" ? bId : `spiffe://${td}/ns/b/sa/b2`;
      assert.match(
        headers["x-forwarded-client-cert"],
        new RegExp(`^By=${expectBy};Hash=[0-9a-f]+;URI=${clientId}$`),
      );
      assert.equal(headers["x-consumer"], "a");
      // Same node: the hop went through b's internal inbound listener (no kernel TCP), not :15008.
      const stats = await n.envoy!.admin("/stats?filter=^listener\\.aether_inbound_internal_");
      const accepted = [...stats.matchAll(/\.downstream_cx_total: (\d+)/g)].map((m) => +m[1]);
      assert.ok(accepted.some((x) => x > 0), `internal inbound listener used:\n${stats}`);
      // /status lists the node's identities and whether SPIRE is reachable.
      const st = await (await fetch(`http://${n.admin.address}/status`)).json();
      assert.equal(st.identity.spireConnected, true);
      assert.deepEqual(st.identity.trustDomains, [td]);
      assert.ok(st.identity.svids.some((v: { spiffeId: string }) => v.spiffeId === clientId));
    });

    await t.step("weights over mTLS: both backends answer", async () => {
      const r = await curlFrom(a, "b.aether.internal:8080", { count: 60 });
      assert.ok((r.counts.b ?? 0) > 5 && (r.counts.b2 ?? 0) > 5, JSON.stringify(r.counts));
      assert.equal(Object.keys(r.counts).length, 2, JSON.stringify(r.counts));
    });

    await t.step("timeout over mTLS: a slow backend answers 504", async () => {
      const r = await curlFrom(a, "b.aether.internal:8080", {
        path: "/slow",
        headers: { "x-echo-delay-ms": "3000" },
      });
      assert.equal(r.first.status, 504);
    });

    await t.step("a forged XFCC from the client is replaced", async () => {
      const forged = `By=spiffe://${td}/ns/x/sa/admin;URI=spiffe://${td}/ns/kube-system/sa/root`;
      const r = await curlFrom(a, "b.aether.internal:8080", {
        path: "/slow",
        headers: { "x-forwarded-client-cert": forged },
      });
      assert.equal(r.first.status, 200);
      const seen = (r.first.json!.headers as Record<string, string>)["x-forwarded-client-cert"];
      assert.match(seen, xfcc);
      assert.ok(!seen.includes("admin") && !seen.includes("root"), seen);
    });

    const certDir = await Deno.makeTempDir({ dir, prefix: "certs-" });
    const sni = "8080.b.aether.internal";
    const tlsTo = (
      host: NetPod,
    ) => ["--resolve", `${sni}:15008:${host.ip}`, `https://${sni}:15008/x`];

    await t.step("plaintext to :15008 is refused; the target port itself is up", async () => {
      const direct = await curlIn(a, [`http://${b.ip}:9090/`]);
      assert.equal(direct.code, 0, "the backend is reachable on its own port");
      const plain = await curlIn(a, [
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        `http://${b.ip}:15008/`,
      ]);
      assert.notEqual(plain.code, 0, `plaintext got an answer: ${plain.stdout}`);
    });

    await t.step(
      "client certificates: the trust domain's SVID passes, another's is refused",
      async () => {
        const svid = secretPem(n, NODE, clientId)!;
        await Deno.writeTextFile(join(certDir, "client.pem"), svid.cert!);
        await Deno.writeTextFile(join(certDir, "client.key"), svid.key!);
        const ok = await curlIn(a, [
          "-k",
          "--cert",
          join(certDir, "client.pem"),
          "--key",
          join(certDir, "client.key"),
          ...tlsTo(b),
        ]);
        assert.equal(ok.code, 0, ok.stderr);
        assert.match(JSON.parse(ok.stdout).headers["x-forwarded-client-cert"], xfcc);

        await selfSigned(certDir, { key: "other.key", cert: "other.pem" }, {
          cn: "other",
          days: 1,
          extensions: ["subjectAltName=URI:spiffe://other.test/ns/a/sa/client"],
        });
        const other = await curlIn(a, [
          "-k",
          "--cert",
          join(certDir, "other.pem"),
          "--key",
          join(certDir, "other.key"),
          ...tlsTo(b),
        ]);
        assert.notEqual(other.code, 0, `another trust domain got in: ${other.stdout}`);
        const none = await curlIn(a, ["-k", ...tlsTo(b)]);
        assert.notEqual(none.code, 0, `no client certificate got in: ${none.stdout}`);
      },
    );

    await t.step("a certificate of the trust domain with two URI SANs is refused", async () => {
      // Minted with the trust domain's root (SPIRE never issues such a certificate).
      const one = await spire.mint("one", [clientId]);
      const okOne = await curlIn(a, ["-k", "--cert", one.cert, "--key", one.key, ...tlsTo(b)]);
      assert.equal(okOne.code, 0, okOne.stderr);
      assert.match(JSON.parse(okOne.stdout).headers["x-forwarded-client-cert"], xfcc);
      const two = await spire.mint("two", [clientId, `spiffe://${td}/ns/kube-system/sa/admin`]);
      const r = await curlIn(a, [
        "-k",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        "--cert",
        two.cert,
        "--key",
        two.key,
        ...tlsTo(b),
      ]);
      assert.equal(r.stdout, "403", `two URI SANs: ${r.stdout} ${r.stderr}`);
    });

    await t.step("edge → pod over mTLS: the backend sees the edge's own identity", async () => {
      const port = freePort();
      const edgeLogs: string[] = [];
      const edge = await startIdentityEdge(
        [
          ...objects,
          gatewayClass(),
          gateway("gw", [{ name: "http", protocol: "HTTP", port }]),
          httpRoute("to-b", {
            parentRefs: [{ name: "gw" }],
            rules: [{ backendRefs: [{ name: "b", namespace: "b", port: 8080 }] }],
          }),
          {
            apiVersion: "gateway.networking.k8s.io/v1beta1",
            kind: "ReferenceGrant",
            metadata: { name: "from-default", namespace: "b" },
            spec: {
              from: [{
                group: "gateway.networking.k8s.io",
                kind: "HTTPRoute",
                namespace: "default",
              }],
              to: [{ group: "", kind: "Service" }],
            },
          },
        ],
        spire,
        edgeLogs,
      );
      try {
        await edge.waitReady(60_000);
        const r = await waitFor("edge → b", async () => {
          const r = await request({ port, authority: "edge.test", path: "/e", timeoutMs: 5000 });
          return r.status === 200 ? r : undefined;
        }, 60_000).catch((e) => {
          throw new Error(`${e}\n${edgeLogs.slice(-20).join("\n")}`);
        });
        const seen = (r.json!.headers as Record<string, string>)["x-forwarded-client-cert"];
        assert.match(seen, new RegExp(`^By=${bId};Hash=[0-9a-f]+;URI=${spire.agentId}$`));
      } finally {
        await edge.close();
      }
    });

    await t.step("an endpoint without identity: refused unless its Service opts in", async () => {
      const no = await curlFrom(a, "bare.aether.internal:8080");
      assert.equal(no.first.status, 503, "never a silent downgrade to plaintext");
      assert.equal(bare.requests.length, 0);
      const yes = await curlFrom(a, "bare-ok.aether.internal:8080");
      assert.equal(yes.first.status, 200, JSON.stringify(yes.first));
      assert.equal(yes.first.json!.backend, "bare");
      const h = yes.first.json!.headers as Record<string, string>;
      assert.equal(h["x-forwarded-client-cert"], undefined, "plaintext: no XFCC");
    });

    await t.step("a pod outside the mesh is reached in plaintext at its own port", async () => {
      const r = await curlFrom(a, "out.aether.internal:8080");
      assert.equal(r.first.status, 200, JSON.stringify(r.first));
      assert.equal(r.first.json!.backend, "out");
      const h = r.first.json!.headers as Record<string, string>;
      assert.equal(h["x-forwarded-client-cert"], undefined, "plaintext: no XFCC");
    });

    await t.step("an endpoint presenting another service account's SVID is refused", async () => {
      // The impostor serves HTTPS on :15008 with b/b's (valid) SVID; the caller expects b/imp.
      const stolen = secretPem(n, NODE, bId)!;
      await Deno.writeTextFile(join(certDir, "b.pem"), stolen.cert!);
      await Deno.writeTextFile(join(certDir, "b.key"), stolen.key!);
      procs.push(
        await echoInPod(imp, "imp", 15008, {
          cert: join(certDir, "b.pem"),
          key: join(certDir, "b.key"),
        }),
      );
      const direct = await curlIn(a, ["-k", `https://${imp.ip}:15008/`]);
      assert.equal(direct.code, 0, "the impostor is up");
      const r = await curlFrom(a, "imp.aether.internal:8080");
      assert.equal(r.first.status, 503, JSON.stringify(r.first));
    });
  } finally {
    await bareEcho?.close();
    await node?.close();
    for (const p of procs.reverse()) await p.stop();
    await net.remove();
    await spire.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
});
