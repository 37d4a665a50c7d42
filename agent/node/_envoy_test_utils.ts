/**
 * Test rig for the node proxy on real Envoy: HTTP backends on loopback, two pods (network
 * namespaces of their own, random names; Kubernetes namespaces "a" and "b") on node-1, the node
 * role's control plane (NodeSnapshots → snapshot cache → XdsServer, delta ADS) and one Envoy
 * whose per-pod listeners (127.0.0.1:18081 in each pod) are bound and ACKed before the rig is
 * returned. close() stops Envoy, the server and the backends and deletes the namespaces.
 * Not part of the agent.
 * @module
 */
import type { MeshIR } from "../../lib/ir/mod.ts";
import { Logger } from "../../lib/log/mod.ts";
import { Registry } from "../../lib/metrics/mod.ts";
import { ensurePeer } from "../../testbed/peers/mod.ts";
import { run } from "../../testbed/peers/mod.ts";
import { SnapshotCache } from "../xds/cache/mod.ts";
import { XdsServer } from "../xds/server/mod.ts";
import { startBackend, startEnvoy, waitFor } from "../xds/server/_test_utils.ts";
import { NodeSnapshots } from "./snapshots.ts";

/** What {@link startNodeProxy} sets up. */
export interface NodeProxyOptions {
  /** Backend names; each gets its own HTTP backend answering `backend <name> <path>`. */
  backends: string[];
  /** The mesh to serve, given each backend's port. */
  mesh: (ports: Record<string, number>) => MeshIR;
  /** node-1's dependency set. */
  dependencies: string[];
}

/** A running node proxy with its control plane. */
export interface NodeProxy {
  /** The network namespaces (`ip netns` names) of the pods in namespaces "a" and "b". */
  nsA: string;
  nsB: string;
  /** Each backend's port. */
  ports: Record<string, number>;
  snapshots: NodeSnapshots;
  server: XdsServer;
  /** The xDS server's metrics. */
  metrics: Registry;
  /** Every name Envoy asked for on demand, in order. */
  asked: string[];
  /** Envoy's admin URL. */
  adminUrl: string;
  /** Envoy's log so far. */
  envoyLogs(): string;
  close(): Promise<void>;
}

/** Starts backends, pods, control plane and Envoy; cleans up after itself if any step fails. */
export async function startNodeProxy(o: NodeProxyOptions): Promise<NodeProxy> {
  const ip = await ensurePeer("ip");
  const id = crypto.randomUUID().slice(0, 8);
  const [nsA, nsB] = [`aether-na-${id}`, `aether-nb-${id}`];
  const backends = o.backends.map((n) => ({ n, b: startBackend(n) }));
  const ports = Object.fromEntries(backends.map(({ n, b }) => [n, b.port]));
  const asked: string[] = [];
  const cache = new SnapshotCache();
  const metrics = new Registry();
  const snapshots = new NodeSnapshots({ cache });
  const server = new XdsServer({
    cache,
    metrics,
    logger: new Logger("xds", () => {}),
    onDemand: (nodeId, typeUrl, names) => {
      asked.push(...names);
      return snapshots.onDemand(nodeId, typeUrl, names);
    },
    onNode: snapshots.onNode,
  });
  let envoy: Awaited<ReturnType<typeof startEnvoy>> | undefined;
  const made: string[] = [];
  const close = async () => {
    await envoy?.stop();
    await server.close();
    for (const { b } of backends) await b.close();
    for (const ns of made) await run(ip, ["netns", "del", ns]).catch(() => {});
  };
  try {
    for (const ns of [nsA, nsB]) {
      await run(ip, ["netns", "add", ns]);
      made.push(ns);
      await run(ip, ["-n", ns, "link", "set", "lo", "up"]);
    }
    snapshots.setMesh(o.mesh(ports));
    snapshots.setView({
      nodeId: "node-1",
      pods: [
        { namespace: "a", name: "client-a", netnsPath: `/var/run/netns/${nsA}` },
        { namespace: "b", name: "client-b", netnsPath: `/var/run/netns/${nsB}` },
      ],
      dependencies: o.dependencies,
    });
    const xdsPort = await server.listen({ port: 0 });
    envoy = await startEnvoy({ nodeId: "node-1", xdsPort, delta: true });
    await waitFor("Envoy ACKs the node snapshot", () => server.isReady("node-1"));
    for (const ns of [nsA, nsB]) {
      await waitFor(
        `listener bound in ${ns}`,
        async () =>
          (await run(ip, ["netns", "exec", ns, "ss", "-ltnH"])).includes("127.0.0.1:18081"),
      );
    }
  } catch (e) {
    const logs = envoy?.logs() ?? "";
    await close();
    throw new Error(`${(e as Error).message}\nenvoy log:\n${logs}`);
  }
  const started = envoy;
  return {
    nsA,
    nsB,
    ports,
    snapshots,
    server,
    metrics,
    asked,
    adminUrl: started.adminUrl,
    envoyLogs: () => started.logs(),
    close,
  };
}
