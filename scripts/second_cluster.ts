/**
 * The second local cluster (`deno task cluster up --second`, issue 20 item 7): its own etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler and a kwok node whose pods run as
 * processes (e2e/peers/kwok_cluster.ts, e2e/pod_runner.ts), on its own bridge in the root network
 * namespace. Its pod CIDR is routed to the kubelet cluster's and back by the host (the host's
 * route to the kubelet node's pod CIDR, the second bridge's pods' default route through the host):
 * flat mode. Everything runs in one detached process (`serve`), its own session; `down` stops it
 * by its recorded pid (SIGTERM; its process group SIGKILLed after 30 s) and removes what a killed
 * one left (its bridge, its pods' netns).
 *
 * aether is not installed in it: run its controller and node agent on the host against the
 * kubeconfig this prints (docs/multicluster.md); with `--cni-socket` the pod runner chains
 * aether's CNI plugin to that node agent.
 * @module
 */
import { basename, dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { Logger } from "../lib/log/mod.ts";
import { KubeClient } from "../lib/kube/mod.ts";
import { ensurePeer, run } from "../testbed/peers/mod.ts";
import { createPodNetwork } from "../e2e/netns.ts";
import { startKwokCluster } from "../e2e/peers/kwok_cluster.ts";
import { PodRunner } from "../e2e/pod_runner.ts";
import { defaultImages } from "../e2e/pod_images.ts";
import { dumpOutput } from "../e2e/peers/proc.ts";

/** Names and addresses of the second cluster (none shared with testbed/cluster/layout.ts). */
export interface SecondLayout {
  /** State folder: the control plane's data, `pid`, `ready.json`, `serve.log`. */
  dir: string;
  bridge: string;
  /** The bridge's subnet; its `.1` is the bridge (the pods' gateway). */
  podCidr: string;
  /** The kwok node's `spec.podCIDR`: the bridge subnet's upper half (kwok starts at `.129`). */
  nodePodCidr: string;
  serviceCidr: string;
  nodeName: string;
  /** Prefix of its pods' netns names. */
  netnsPrefix: string;
}

/**
 * The second cluster beside the kubelet cluster whose state folder is `clusterDir` (`over`: other
 * names and addresses, e.g. a test's).
 */
export function secondLayout(clusterDir: string, over: Partial<SecondLayout> = {}): SecondLayout {
  return {
    dir: join(dirname(clusterDir), `${basename(clusterDir)}-second`),
    bridge: "aether2",
    podCidr: "10.217.0.0/24",
    nodePodCidr: "10.217.0.128/25",
    serviceCidr: "10.218.0.0/24",
    nodeName: "aether-second",
    netnsPrefix: "aether-2nd",
    ...over,
  };
}

/** What `serve` writes once the cluster is up. */
export interface SecondReady {
  server: string;
  kubeconfig: string;
  nodeName: string;
  podCidr: string;
  bridge: string;
}

const pidFile = (l: SecondLayout) => join(l.dir, "pid");
const readyFile = (l: SecondLayout) => join(l.dir, "ready.json");
const logFile = (l: SecondLayout) => join(l.dir, "serve.log");

/** The serving process's pid while it runs. */
async function livePid(l: SecondLayout): Promise<number | undefined> {
  const pid = Number((await Deno.readTextFile(pidFile(l)).catch(() => "")).trim());
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const cmd = await Deno.readTextFile(`/proc/${pid}/cmdline`).catch(() => "");
  return cmd.includes("second_cluster.ts") && cmd.includes(l.dir) ? pid : undefined;
}

/** Whether `pid` exists and is not a zombie. */
async function processLives(pid: number): Promise<boolean> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`).catch(() => "");
  const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  return stat !== "" && state !== "Z" && state !== "X";
}

/** The running second cluster, if any. */
export async function secondStatus(l: SecondLayout): Promise<SecondReady | undefined> {
  if (!(await livePid(l))) return undefined;
  const text = await Deno.readTextFile(readyFile(l)).catch(() => undefined);
  return text ? JSON.parse(text) : undefined;
}

/** Starts the second cluster (or returns the running one); `cniSocket`: aether's node agent. */
export async function secondUp(l: SecondLayout, cniSocket?: string): Promise<SecondReady> {
  const running = await secondStatus(l);
  if (running) return running;
  await secondDown(l);
  await Deno.mkdir(l.dir, { recursive: true });
  const script = join(dirname(new URL(import.meta.url).pathname), "second_cluster.ts");
  const args = [Deno.execPath(), "run", "-A", script, "serve", "--layout", JSON.stringify(l)]
    .concat(cniSocket ? ["--cni-socket", cniSocket] : []);
  const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
  const out = await run("sh", [
    "-c",
    `setsid ${args.map(q).join(" ")} </dev/null >>${q(logFile(l))} 2>&1 & echo $!`,
  ]);
  const launched = Number(out.trim());
  await Deno.writeTextFile(pidFile(l), `${launched}\n`);
  const deadline = Date.now() + 300_000;
  while (Date.now() < deadline) {
    const ready = await secondStatus(l);
    if (ready) return ready;
    // Gone, not merely unrecognised: while it execs (setsid, then deno) its command line can
    // read empty for a moment, which livePid takes for another process.
    if (!(await processLives(launched))) break;
    await new Promise((r) => setTimeout(r, 500));
  }
  const tail = (await Deno.readTextFile(logFile(l)).catch(() => "")).split("\n").slice(-40);
  await secondDown(l);
  throw new Error(`the second cluster did not come up:\n${tail.join("\n")}`);
}

/** Kills `pids` (SIGKILL; a negative one is a process group; already gone is fine). */
function killAll(pids: number[]): void {
  for (const pid of pids) {
    try {
      Deno.kill(pid, "SIGKILL");
    } catch { /* gone */ }
  }
}

/**
 * Stops the second cluster and removes its traces and state folder: the serving process
 * (SIGTERM), then what is left of its process group (a stuck or crashed serve's control plane),
 * its pods' processes (by their netns) and netns, its bridge.
 */
export async function secondDown(l: SecondLayout): Promise<void> {
  const pid = await livePid(l);
  if (pid) {
    Deno.kill(pid, "SIGTERM");
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline && await livePid(l)) {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  // The recorded serve's session (setsid: its pid is the group's id), even when serve is gone.
  const recorded = Number((await Deno.readTextFile(pidFile(l)).catch(() => "")).trim());
  if (Number.isInteger(recorded) && recorded > 0) killAll([-recorded]);
  const ip = await ensurePeer("ip");
  for (const line of (await run(ip, ["netns", "list"])).split("\n")) {
    const name = line.split(" ")[0];
    if (!name.startsWith(`${l.netnsPrefix}-`)) continue;
    const pids = await run(ip, ["netns", "pids", name]).catch(() => "");
    killAll(pids.split("\n").filter((x) => x.trim()).map(Number));
    await run(ip, ["netns", "del", name]).catch(() => {});
  }
  await run(ip, ["link", "del", l.bridge]).catch(() => {});
  await Deno.remove(l.dir, { recursive: true }).catch(() => {});
}

/** The serving process: brings everything up, writes `ready.json`, stops on SIGTERM/SIGINT. */
async function serve(l: SecondLayout, cniSocket?: string): Promise<void> {
  const log = new Logger("second-cluster");
  const net = await createPodNetwork({ bridge: l.bridge, subnet: l.podCidr });
  await net.up();
  const kwok = await startKwokCluster(join(l.dir, "kube"), {
    podCidr: l.nodePodCidr,
    nodeName: l.nodeName,
    serviceClusterIpRange: l.serviceCidr,
  }).catch(async (e) => {
    await net.remove();
    throw e;
  });
  const client = new KubeClient({ kubeconfig: kwok.kube.kubeconfig });
  const runner = new PodRunner({
    client,
    nodeName: l.nodeName,
    net,
    images: await defaultImages(),
    netnsPrefix: l.netnsPrefix,
    logger: log.child("pods"),
    ...(cniSocket ? { cniSocket } : {}),
  });
  await runner.start();
  const ready: SecondReady = {
    server: kwok.kube.url,
    kubeconfig: kwok.kube.kubeconfig,
    nodeName: l.nodeName,
    podCidr: l.podCidr,
    bridge: l.bridge,
  };
  await Deno.writeTextFile(readyFile(l), JSON.stringify(ready, null, 2) + "\n");
  log.info("up", { ...ready });
  await new Promise<void>((resolve) => {
    for (const s of ["SIGTERM", "SIGINT"] as const) Deno.addSignalListener(s, () => resolve());
  });
  log.info("stopping");
  await Deno.remove(readyFile(l)).catch(() => {});
  await runner.stop();
  client.close();
  const output = dumpOutput(kwok.kube.procs, 10);
  await kwok.stop();
  await net.remove();
  log.info("stopped", { lastOutput: output.slice(-4000) });
}

if (import.meta.main) {
  const { positionals, values } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { layout: { type: "string" }, "cni-socket": { type: "string" } },
  });
  if (positionals[0] !== "serve" || !values.layout) {
    console.error("usage: second_cluster.ts serve --layout JSON [--cni-socket PATH]");
    Deno.exit(2);
  }
  await serve(JSON.parse(values.layout) as SecondLayout, values["cni-socket"]);
  Deno.exit(0);
}
