/**
 * A pod's CNI ADD with and without aether's plugin in the chain, as a runtime runs it: libcni's
 * own driver (the `cnitool` peer) executes a conflist of Debian's `bridge` + `host-local`, and the
 * same conflist with aether's static forwarder chained by the installer. With the plugin the ADD
 * returns only once the node agent (`runNode` in process, `capture: true`, `cniSocket`, its real
 * node proxy) has the pod's table in place and the node proxy serves its capture listener
 * (docs/capture.md). The bridge lives in a host netns of the bench's own; each pod is a fresh
 * `ip netns add` with loopback up (the runtime's loopback step, not timed), its Pod object known
 * to the agent beforehand (as the API server has it while the sandbox is made). The two chains
 * alternate ABBA, `--adds` ADDs each (each followed by its DEL, not timed). Prints one JSON line:
 * p50/p90/max ms of ADD per chain. Started by bench/capture_hop.ts (`--adds`).
 *
 *   deno run -A bench/capture_add.ts [--adds 20]
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import type { SourceObject } from "../lib/source/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import { MemorySource } from "../testbed/memory_source.ts";
import { buildCniForwarder } from "../testbed/cni_forwarder.ts";
import { installOnce } from "../cni/mod.ts";
import { nodeDefaults, runNode } from "../agent/node/mod.ts";
import { median, roundUs } from "./latency_hist.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: { adds: { type: "string", default: "20" } },
});
const adds = Number(values.adds);
const NODE = "node-1", NS = "shop";
const [ip, cnitool] = [await ensurePeer("ip"), await ensurePeer("cnitool")];
const debian = (await ensurePeer("cni-plugins")).replace(/\/bridge$/, "");

async function exec(cmd: string, args: string[], env: Record<string, string> = {}) {
  const o = await new Deno.Command(cmd, { args, env, stdout: "piped", stderr: "piped" }).output();
  if (!o.success) {
    throw new Error(`${cmd} ${args.join(" ")}: ${new TextDecoder().decode(o.stderr).trim()}`);
  }
}

const id = crypto.randomUUID().slice(0, 6);
const root = await Deno.makeTempDir({ prefix: "aether-bench-add-" });
const host = `aecapadd-${id}`;
const netnses: string[] = [];
const binDir = join(root, "bin"), socketPath = join(root, "run", "cni.sock");
const confDirs = { plain: join(root, "plain"), chained: join(root, "chained") };
const conflist = JSON.stringify({
  cniVersion: "1.0.0",
  name: "pods",
  plugins: [{
    type: "bridge",
    bridge: `aeadd${id.slice(0, 4)}`,
    isGateway: true,
    ipam: {
      type: "host-local",
      dataDir: join(root, "ipam"),
      ranges: [[{ subnet: "10.252.9.0/24" }]],
      routes: [{ dst: "0.0.0.0/0" }],
    },
  }],
});
const podName = (i: number) => `web-${i}`;
/** The Pod objects as the API server has them while their sandboxes are made. */
const podObjects: SourceObject[] = Array.from({ length: adds + 1 }, (_, i) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: podName(i), namespace: NS, uid: `uid-${podName(i)}` },
  spec: { nodeName: NODE },
  status: { phase: "Pending" },
}));
const service: SourceObject[] = [{
  apiVersion: "v1",
  kind: "Service",
  metadata: { name: "echo", namespace: NS, creationTimestamp: "2026-01-01T00:00:00Z" },
  spec: { clusterIP: "198.18.77.20", ports: [{ name: "http", port: 80, appProtocol: "http" }] },
}];

let node: Awaited<ReturnType<typeof runNode>> | undefined;
let cleaned: Promise<void> | undefined;
const cleanup = () =>
  cleaned ??= (async () => {
    await node?.close().catch(() => {});
    for (const n of [...netnses].reverse()) await exec(ip, ["netns", "del", n]).catch(() => {});
    await Deno.remove(root, { recursive: true }).catch(() => {});
  })();
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  Deno.addSignalListener(sig, () => cleanup().finally(() => Deno.exit(130)));
}

try {
  for (const d of Object.values(confDirs)) {
    await Deno.mkdir(d, { recursive: true });
    await Deno.writeTextFile(join(d, "10-pods.conflist"), conflist);
  }
  const plugin = await buildCniForwarder(join(root, "aether-cni-build"));
  await installOnce({ binDir, confDir: confDirs.chained, plugin, keys: { socketPath } });
  await exec(ip, ["netns", "add", host]);
  netnses.push(host);
  node = await runNode({
    ...nodeDefaults,
    source: new MemorySource([...service, ...podObjects]),
    nodeName: NODE,
    adminAddress: "127.0.0.1:0",
    xdsAddress: "127.0.0.1:0",
    dnsAddress: "none",
    capture: true,
    cniSocket: socketPath,
    logger: new Logger("bench", () => {}),
  });
  await node.waitReady(90_000);

  /** cnitool `verb` of pod i over `chain`, inside the bench's host netns. */
  const cni = (verb: "add" | "del", chain: keyof typeof confDirs, i: number, path: string) =>
    exec(ip, ["netns", "exec", host, cnitool, verb, "pods", path], {
      NETCONFPATH: confDirs[chain],
      CNI_PATH: `${binDir}:${debian}`,
      CNI_ARGS: `IgnoreUnknown=1;K8S_POD_NAMESPACE=${NS};K8S_POD_NAME=${podName(i)};` +
        `K8S_POD_INFRA_CONTAINER_ID=sandbox-${podName(i)};K8S_POD_UID=uid-${podName(i)}`,
      CAP_ARGS: JSON.stringify({ "io.kubernetes.cri.pod-annotations": {} }),
    });
  const ms: Record<keyof typeof confDirs, number[]> = { plain: [], chained: [] };
  const one = async (chain: keyof typeof confDirs, i: number) => {
    const name = `${host}-${chain}-${i}`;
    await exec(ip, ["netns", "add", name]);
    netnses.push(name);
    await exec(ip, ["-n", name, "link", "set", "lo", "up"]);
    const path = `/run/netns/${name}`;
    const t0 = performance.now();
    await cni("add", chain, i, path);
    ms[chain].push(performance.now() - t0);
    if (chain === "chained") {
      // The ADD returned: the pod must be captured and its listener served already.
      const res = await fetch(`http://${node!.admin.address}/debug/capture`);
      const doc = await res.json() as {
        pods: { key: string; state: string; listenerServed: boolean }[];
      };
      const p = doc.pods.find((x) => x.key === `${NS}/${podName(i)}`);
      if (p?.state !== "captured" || !p.listenerServed) {
        throw new Error(`ADD of ${podName(i)} returned before its capture: ${JSON.stringify(p)}`);
      }
    }
    await cni("del", chain, i, path);
    await exec(ip, ["netns", "del", name]);
    netnses.splice(netnses.indexOf(name), 1);
  };
  // A first ADD of each chain, not counted: the binaries' page cache, the agent's first pod.
  await one("plain", adds);
  await one("chained", adds);
  ms.plain.length = ms.chained.length = 0;
  for (let i = 0; i < adds; i++) {
    const order = i % 2 === 0 ? ["plain", "chained"] as const : ["chained", "plain"] as const;
    for (const c of order) await one(c, i);
  }
  const stats = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return {
      p50: roundUs(median(s)),
      p90: roundUs(s[Math.min(s.length - 1, Math.ceil(s.length * 0.9) - 1)]),
      max: roundUs(s[s.length - 1]),
    };
  };
  const plain = stats(ms.plain), chained = stats(ms.chained);
  console.log(JSON.stringify({
    adds,
    plain,
    chained,
    addedP50Ms: roundUs(chained.p50 - plain.p50),
    load: roundUs(Deno.loadavg()[0]),
  }));
} finally {
  await cleanup();
}
Deno.exit(0);
