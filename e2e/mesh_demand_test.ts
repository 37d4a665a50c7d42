/**
 * Demand-scoped distribution on real Envoy 1.40: two node agents, each with its own Envoy, 50 mesh
 * services. Each proxy holds only its dependency set (read from Envoy's config_dump), grows it
 * with on-demand CDS on the first request to a cold service, and a new producer route on a service
 * is pushed only to the proxy whose set holds it.
 */
import { assert, assertEquals } from "../testbed/assert.ts";
import { closeEchos, startEchos, waitFor } from "./harness.ts";
import { createPod, curlFrom, meshService, podObject, startNode, toYaml } from "./mesh_harness.ts";
import type { NodeAgent } from "../agent/node/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";

async function activeClusters(node: NodeAgent): Promise<string[]> {
  const dump = JSON.parse(await node.envoy!.admin("/config_dump?resource=dynamic_active_clusters"));
  return (dump.configs as { cluster: { name: string } }[]).map((c) => c.cluster.name).sort();
}

/** The sum of a counter's series (those whose line also has `having`). */
function total(node: NodeAgent, metric: string, having = ""): number {
  return node.metrics.render().split("\n")
    .filter((l) => l.startsWith(`${metric}{`) && l.includes(having))
    .reduce((sum, l) => sum + Number(l.split(" ").pop()), 0);
}

const pushes = (node: NodeAgent) => total(node, "aether_xds_pushes_total");
/** Resources the node role encoded anew (issue 21's counter). */
const encoded = (node: NodeAgent, type = "") =>
  total(node, "aether_xds_resources_encoded_total", type);

Deno.test("mesh e2e: demand scoping across two node proxies and 50 services", async (t) => {
  const names = Array.from({ length: 50 }, (_, i) => `svc-${i}`);
  const echos = await startEchos(...names);
  const p1 = await createPod(), p2 = await createPod();
  const dir = await Deno.makeTempDir({ prefix: "aether-demand-" });
  const route = (svc: string, to: string): SourceObject => ({
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      name: `${svc}-route`,
      namespace: "mesh",
      generation: 1,
      creationTimestamp: "2026-01-01T00:00:00Z",
    },
    spec: {
      parentRefs: [{ group: "", kind: "Service", name: svc, port: 8080 }],
      rules: [{
        matches: [{ path: { type: "PathPrefix", value: "/moved" } }],
        backendRefs: [{ name: to, port: 8080 }],
      }, {
        backendRefs: [{ name: svc, port: 8080 }],
      }],
    },
  });
  const base: SourceObject[] = [
    ...names.flatMap((n) => meshService(n, "mesh", echos[n])),
    podObject(p1, "team1", "client-1", "node-1"),
    podObject(p2, "team2", "client-2", "node-2"),
    // svc-2's route sends /moved to svc-30: node-1's set must grow to include svc-30.
    route("svc-2", "svc-30"),
  ];
  await Deno.writeTextFile(`${dir}/mesh.yaml`, toYaml(...base));
  const node1 = await startNode(dir, "node-1"), node2 = await startNode(dir, "node-2");
  try {
    await t.step(
      "the first request to each cold service succeeds via on-demand discovery (VHDS, then its clusters)",
      async () => {
        for (const i of [0, 1, 2, 3, 4]) {
          const r = await curlFrom(p1, `svc-${i}.aether.internal`);
          assertEquals(r.first.status, 200, JSON.stringify(r.first));
          assertEquals(r.first.json?.backend, `svc-${i}`);
        }
        for (const i of [10, 11, 12]) {
          assertEquals(
            (await curlFrom(p2, `svc-${i}.aether.internal`)).first.json?.backend,
            `svc-${i}`,
          );
        }
        assertEquals(
          (await curlFrom(p1, "svc-2.aether.internal", { path: "/moved/x" })).first.json?.backend,
          "svc-30",
        );
      },
    );
    await t.step("each proxy holds only its dependency set (Envoy config_dump)", async () => {
      const set1 = node1.snapshots.dependencies("node-1")!,
        set2 = node2.snapshots.dependencies("node-2")!;
      const want1 = ["svc-0", "svc-1", "svc-2", "svc-3", "svc-30", "svc-4"].map((s) =>
        `${s}.aether.internal`
      );
      assertEquals(set1, want1);
      assertEquals(set2, ["svc-10", "svc-11", "svc-12"].map((s) => `${s}.aether.internal`));
      await waitFor(
        "node-1 clusters",
        async () => JSON.stringify(await activeClusters(node1)) === JSON.stringify(want1),
      );
      // node-2's Envoy applies its own config on its own time: wait for it too.
      await waitFor(
        "node-2 clusters",
        async () => JSON.stringify(await activeClusters(node2)) === JSON.stringify(set2),
      );
      assert(set1.length + set2.length < names.length / 4, "far fewer than all 50 services");
    });
    await t.step("a new producer route on svc-1 is pushed to node-1 only", async () => {
      const before1 = pushes(node1), before2 = pushes(node2);
      const vhosts1 = encoded(node1, "VirtualHost"), all2 = encoded(node2);
      assert(vhosts1 > 0 && all2 > 0, "the node role counts what it encodes");
      await Deno.writeTextFile(`${dir}/mesh.yaml`, toYaml(...base, route("svc-1", "svc-0")));
      await waitFor(
        "node-1 serves the new route",
        async () =>
          (await curlFrom(p1, "svc-1.aether.internal", { path: "/moved" })).first.json?.backend ===
            "svc-0",
      );
      assert(pushes(node1) > before1, "node-1 got the route");
      await new Promise((r) => setTimeout(r, 500));
      assertEquals(pushes(node2), before2, "node-2 (svc-1 not in its set) got nothing");
      // node-1 encoded svc-1's virtual host again; node-2 encoded nothing at all.
      assert(encoded(node1, "VirtualHost") > vhosts1, "node-1 re-encoded svc-1's virtual host");
      assertEquals(encoded(node2), all2, "node-2 encoded nothing");
    });
  } finally {
    await node1.close();
    await node2.close();
    await closeEchos(echos);
    await p1.remove();
    await p2.remove();
    await Deno.remove(dir, { recursive: true });
  }
});
