/**
 * GAMMA east-west on real Envoy 1.40 as the node proxy: pods are network namespaces, each calls
 * `svc.<meshDomain>` on its own 127.0.0.1:18081 (a per-pod listener the node proxy binds inside the
 * pod's netns), so the proxy knows the caller's namespace. Issue acceptance: producer 90/10,
 * consumer override in namespace a only, /admin, per-route timeout → 504, header/method/query
 * matches, GRPCRoute method match to a real gRPC backend.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { closeEchos, startEchos } from "./harness.ts";
import { startGrpcEcho } from "./echo/grpc_server.ts";
import {
  answer,
  createPod,
  curlFrom,
  meshService,
  podObject,
  startNode,
  toYaml,
} from "./mesh_harness.ts";
import type { SourceObject } from "../lib/source/mod.ts";

const svcParent = (name: string, namespace?: string) => ({
  group: "",
  kind: "Service",
  name,
  ...(namespace ? { namespace } : {}),
  port: 8080,
});
const ref = (name: string, extra: Record<string, unknown> = {}) => ({ name, port: 8080, ...extra });

Deno.test("mesh e2e: GAMMA producer/consumer routes on the node proxy", async (t) => {
  const echos = await startEchos("svc-1", "svc-1-v2", "svc-admin", "svc-slow");
  const grpc = await Promise.all(
    ["grpc-v1", "grpc-v2"].map((n) =>
      startGrpcEcho(n, ["/aether.test.Echo/Hello", "/aether.test.Echo/Bye"])
    ),
  );
  const podA = await createPod(), podB = await createPod();
  const dir = await Deno.makeTempDir({ prefix: "aether-mesh-" });
  const objects: SourceObject[] = [
    ...["mesh", "a", "b"].map((n) => ({
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: n },
    })),
    ...Object.entries(echos).flatMap(([n, e]) => meshService(n, "mesh", e)),
    ...grpc.flatMap((g) => meshService(g.name, "mesh", g, { appProtocol: "kubernetes.io/h2c" })),
    ...meshService("grpc-svc", "mesh", grpc[0], { appProtocol: "kubernetes.io/h2c" }),
    podObject(podA, "a", "client-a", "node-1"),
    podObject(podB, "b", "client-b", "node-1"),
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: {
        name: "svc-1-producer",
        namespace: "mesh",
        generation: 1,
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      spec: {
        parentRefs: [svcParent("svc-1")],
        rules: [
          {
            matches: [{ path: { type: "PathPrefix", value: "/admin" } }],
            backendRefs: [ref("svc-admin")],
          },
          {
            matches: [{ path: { type: "PathPrefix", value: "/slow" } }],
            timeouts: { request: "300ms" },
            backendRefs: [ref("svc-slow")],
          },
          {
            matches: [{ headers: [{ name: "x-env", value: "canary" }] }],
            backendRefs: [ref("svc-1-v2")],
          },
          { matches: [{ method: "DELETE" }], backendRefs: [ref("svc-admin")] },
          {
            matches: [{ queryParams: [{ name: "debug", value: "1" }] }],
            backendRefs: [ref("svc-1-v2")],
          },
          { backendRefs: [ref("svc-1", { weight: 90 }), ref("svc-1-v2", { weight: 10 })] },
        ],
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: {
        name: "svc-1-consumer",
        namespace: "a",
        generation: 1,
        creationTimestamp: "2026-01-02T00:00:00Z",
      },
      spec: {
        parentRefs: [svcParent("svc-1", "mesh")],
        rules: [{ backendRefs: [ref("svc-1-v2", { namespace: "mesh" })] }],
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1beta1",
      kind: "ReferenceGrant",
      metadata: { name: "from-a", namespace: "mesh" },
      spec: {
        from: [{ group: "gateway.networking.k8s.io", kind: "HTTPRoute", namespace: "a" }],
        to: [{ group: "", kind: "Service" }],
      },
    },
    {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "GRPCRoute",
      metadata: {
        name: "grpc-producer",
        namespace: "mesh",
        generation: 1,
        creationTimestamp: "2026-01-01T00:00:00Z",
      },
      spec: {
        parentRefs: [svcParent("grpc-svc")],
        rules: [
          {
            matches: [{ method: { service: "aether.test.Echo", method: "Bye" } }],
            backendRefs: [ref("grpc-v2")],
          },
          { backendRefs: [ref("grpc-v1")] },
        ],
      },
    },
  ];
  await Deno.writeTextFile(`${dir}/mesh.yaml`, toYaml(...objects));
  const node = await startNode(dir, "node-1");
  const host = "svc-1.aether.internal";
  try {
    await t.step(
      "producer route: 90/10 split within ±5% over 1,000 requests (caller in b)",
      async () => {
        const r = await curlFrom(podB, host, { count: 1000 });
        const v1 = r.counts["svc-1"] ?? 0, v2 = r.counts["svc-1-v2"] ?? 0;
        assertEquals(v1 + v2, 1000, JSON.stringify(r.counts));
        assert(Math.abs(v1 - 900) <= 50, `svc-1 got ${v1}`);
      },
    );
    await t.step("consumer route in namespace a overrides for callers in a only", async () => {
      const r = await curlFrom(podA, host, { count: 200 });
      assertEquals(r.counts, { "svc-1-v2": 200 });
    });
    await t.step("/admin, header, method and query matches (producer, caller in b)", async () => {
      assertEquals(answer(await curlFrom(podB, host, { path: "/admin/users" })), "svc-admin");
      assertEquals(
        answer(await curlFrom(podB, host, { headers: { "x-env": "canary" }, count: 20 })),
        "svc-1-v2",
      );
      assertEquals(
        answer(await curlFrom(podB, host, { method: "DELETE", count: 20 })),
        "svc-admin",
      );
      assertEquals(
        answer(await curlFrom(podB, host, { path: "/?debug=1", count: 20 })),
        "svc-1-v2",
      );
    });
    await t.step("per-route timeout turns a slow backend into 504 at the set time", async () => {
      // A 504 comes only from a timeout firing before the backend's 200 at 2 s.
      const r = await curlFrom(podB, host, {
        path: "/slow",
        headers: { "x-echo-delay-ms": "2000" },
      });
      assertEquals(r.first.status, 504);
      assertEquals((await curlFrom(podB, host, { path: "/slow" })).first.status, 200);
    });
    await t.step("GRPCRoute method match to a real gRPC backend", async () => {
      const call = async (method: string) =>
        JSON.parse(
          (await podB.exec(Deno.execPath(), [
            "run",
            "-A",
            "e2e/mesh_client_grpc.ts",
            "--host",
            "grpc-svc.aether.internal",
            "--method",
            method,
          ])).trim(),
        ).backend;
      assertEquals(await call("/aether.test.Echo/Bye"), "grpc-v2");
      assertEquals(await call("/aether.test.Echo/Hello"), "grpc-v1");
    });
    await t.step(
      "status: mesh routes Accepted and ResolvedRefs on the Service parent",
      async () => {
        const doc = await (await fetch(`http://${node.admin.address}/status`)).json();
        const route = doc.config.objects.find((o: { kind: string; name: string }) =>
          o.kind === "HTTPRoute" && o.name === "svc-1-consumer"
        );
        const conds = route.status.parents[0].conditions as { type: string; status: string }[];
        assertEquals(route.status.parents[0].parentRef.kind, "Service");
        assertEquals(conds.map((c) => `${c.type}=${c.status}`).sort(), [
          "Accepted=True",
          "ResolvedRefs=True",
        ]);
      },
    );
  } finally {
    await node.close();
    await closeEchos(echos);
    for (const g of grpc) await g.close();
    await podA.remove();
    await podB.remove();
    await Deno.remove(dir, { recursive: true });
  }
});
