/**
 * The local cluster: a real one-node Kubernetes in one network namespace of this machine (etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, containerd + runc + CNI
 * plugins, CoreDNS, kube-proxy), images built locally without a registry, state in the git-ignored
 * `.cache/cluster/`. See docs/kubernetes.md.
 *
 * One cluster per machine (containerd 1.6 hard-wires /run/containerd, the kubelet owns the
 * `kubepods` cgroups and three sysctls): every entry point takes the machine-wide lock
 * {@link clusterLockPath}, so parallel test files wait for each other.
 * @module
 */
import { join } from "node:path";
import { Logger } from "../../lib/log/mod.ts";
import { projectRoot } from "../peers/mod.ts";
import { withFileLock } from "../peers/mod.ts";
import { ensureAetherArchive } from "./aether_image.ts";
import { openApi } from "./api.ts";
import { type Leftovers, leftovers, nodeDown } from "./down.ts";
import {
  ensureImageArchive,
  type ImageKey,
  imageNames,
  importImage,
  peerImageSpec,
} from "./images.ts";
import { defaultLayout, type Layout, paths } from "./layout.ts";
import { ensureMetallb, metallbReady } from "./metallb.ts";
import { netnsExists } from "./net.ts";
import { daemons, nodeUp, startApiServer, stopApiServer } from "./node.ts";
import { daemonPid } from "./proc.ts";

export { imageNames, leftovers };
export type { ImageKey, Layout, Leftovers };

/** The machine-wide lock every cluster operation holds. Its content names the running cluster. */
export const clusterLockPath = "/run/lock/aether-cluster.lock";

/**
 * The default state folder: `$AETHER_CLUSTER_DIR`, else `<project>/.cache/cluster`. Checkouts that
 * set the same folder share one running cluster instead of tearing each other's down.
 */
export const defaultClusterDir: string = Deno.env.get("AETHER_CLUSTER_DIR") ??
  join(projectRoot, ".cache", "cluster");

/** Options shared by the entry points. */
export interface ClusterOptions {
  /** State folder (default {@link defaultClusterDir}). */
  dir?: string;
  /** Images to import besides pause (default echo-basic and busybox); `aether` builds aether's. */
  images?: ImageKey[];
  log?: Logger;
}

/** A running cluster. */
export interface Cluster {
  layout: Layout;
  /** Admin kubeconfig (system:masters), for kubectl, helm and the conformance suite. */
  kubeconfig: string;
  /** https://<node IP>:6443, reachable from the host. */
  server: string;
  /** containerd's socket (for {@link importImage}). */
  containerdSock: string;
  /** Builds (if needed) and imports one of the known images; resolves with its archive's path. */
  importImage(key: ImageKey): Promise<string>;
  /** Stops kube-apiserver only (a control-plane outage; pods and the kubelet keep running). */
  stopApiServer(): Promise<void>;
  /** Starts kube-apiserver again and waits until it is ready. */
  startApiServer(): Promise<void>;
  /** Tears the cluster down (the caller holds the lock through {@link withCluster}). */
  down(): Promise<void>;
}

function cluster(l: Layout, log: Logger, imagesDir: string): Cluster {
  const p = paths(l);
  return {
    layout: l,
    kubeconfig: p.adminKubeconfig,
    server: `https://${l.nodeIp}:6443`,
    containerdSock: p.containerdSock,
    importImage: (key) => importKnownImage(p.containerdSock, imagesDir, key, log),
    stopApiServer: () => stopApiServer(l),
    startApiServer: () => startApiServer(l),
    down: () => nodeDown(l, log),
  };
}

/** Builds and imports a known image into a running cluster's containerd; returns its archive. */
export async function importKnownImage(
  containerdSock: string,
  imagesDir: string,
  key: ImageKey,
  log: Logger,
): Promise<string> {
  const started = Date.now();
  const archive = key === "aether"
    ? await ensureAetherArchive(imagesDir)
    : await ensureImageArchive(imagesDir, await peerImageSpec(key));
  await importImage(containerdSock, archive);
  log.info("image imported", { image: imageNames[key], ms: Date.now() - started });
  return archive;
}

/** Whether the cluster in `l` runs: every daemon alive and the node Ready. */
export async function isUp(l: Layout): Promise<boolean> {
  const p = paths(l);
  if (!(await Deno.stat(p.ready).then(() => true, () => false))) return false;
  for (const d of daemons) if ((await daemonPid(l, d)) === undefined) return false;
  const api = await openApi(p.adminKubeconfig).catch(() => undefined);
  if (!api) return false;
  try {
    const r = await api.request("GET", `/api/v1/nodes/${l.nodeName}`);
    // deno-lint-ignore no-explicit-any
    return r.json?.status?.conditions?.some((c: any) => c.type === "Ready" && c.status === "True");
  } catch {
    return false;
  } finally {
    api.close();
  }
}

/** Installs the LoadBalancer implementation (MetalLB's controller) unless it already runs. */
async function ensureLoadBalancer(c: Cluster, log: Logger): Promise<void> {
  const api = await openApi(c.kubeconfig);
  try {
    if (await metallbReady(api)) return;
  } finally {
    api.close();
  }
  await c.importImage("metallb");
  await ensureMetallb(c.kubeconfig, c.layout.lbCidr, log);
}

/** The images a cluster gets when the caller names none (besides pause). */
const defaultImages: readonly ImageKey[] = ["echoBasic", "busybox"];

async function lockedUp(opts: ClusterOptions, lock: string): Promise<Cluster> {
  const log = opts.log ?? new Logger("cluster");
  const l = defaultLayout(opts.dir ?? defaultClusterDir);
  const imagesDir = join(l.dir, "..", "images");
  const c = cluster(l, log, imagesDir);
  const owner = (await Deno.readTextFile(lock)).trim();
  if (owner === l.dir && await isUp(l)) {
    log.info("cluster already up; reusing it", { dir: l.dir });
    // The images a fresh cluster would get: the one running may have come up with other ones
    // (the conformance run's), and a caller naming none relies on the defaults.
    for (const key of opts.images ?? defaultImages) await c.importImage(key);
    await ensureLoadBalancer(c, log);
    return c;
  }
  // Whatever is left of an earlier cluster (ours half-started, or one from another checkout).
  if (owner && owner !== l.dir) {
    log.info("tearing down the cluster of another state folder", { dir: owner });
    await nodeDown(defaultLayout(owner), log);
  }
  if (await netnsExists(l) || await Deno.stat(l.dir).then(() => true, () => false)) {
    log.info("cleaning up an earlier cluster", { dir: l.dir });
    await nodeDown(l, log);
  }
  await Deno.writeTextFile(lock, `${l.dir}\n`);
  const peerImages = (opts.images ?? defaultImages).filter((k) => k !== "aether");
  // A daemon that dies during start-up gets one more try from a clean node (seen once in CI:
  // containerd exited right after the previous test's teardown, and came up on the next try);
  // the first failure is logged whole, so its cause stays readable.
  for (let attempt = 1;; attempt++) {
    try {
      await nodeUp(l, { images: peerImages, imagesDir, log });
      break;
    } catch (e) {
      log.error("cluster up failed; tearing down what started", { attempt, error: String(e) });
      await nodeDown(l, log).catch((d) => log.error("teardown failed", { error: String(d) }));
      if (attempt >= 2 || !isStartupExit(e)) throw e;
    }
  }
  if (opts.images?.includes("aether")) await c.importImage("aether");
  await ensureLoadBalancer(c, log);
  return c;
}

/** Whether `e` is a node daemon that exited while it started ({@link nodeUp}'s error). */
function isStartupExit(e: unknown): boolean {
  return e instanceof Error && / exited during start-up;/.test(e.message);
}

async function withLock<T>(fn: () => Promise<T>): Promise<T> {
  await Deno.mkdir("/run/lock", { recursive: true });
  return await withFileLock(clusterLockPath, fn);
}

/**
 * Brings the cluster up (or reuses the one already up from the same folder) and returns it. The
 * lock is released on return: use {@link withCluster} to keep others out while you use it.
 */
export function clusterUp(opts: ClusterOptions = {}): Promise<Cluster> {
  return withLock(() => lockedUp(opts, clusterLockPath));
}

/** Tears the cluster down and removes its traces and state folder (images are kept). */
export function clusterDown(opts: ClusterOptions = {}): Promise<void> {
  return withLock(async () => {
    const l = defaultLayout(opts.dir ?? defaultClusterDir);
    await nodeDown(l, opts.log ?? new Logger("cluster"));
    const owner = (await Deno.readTextFile(clusterLockPath)).trim();
    if (owner === l.dir) await Deno.writeTextFile(clusterLockPath, "");
  });
}

/**
 * Runs `fn` with the cluster up, holding the machine-wide lock the whole time (parallel tests on
 * this machine wait for each other). The cluster stays up afterwards for the next user unless
 * `fn` called `down()`.
 */
export function withCluster<T>(
  fn: (c: Cluster) => Promise<T>,
  opts: ClusterOptions = {},
): Promise<T> {
  return withLock(async () => fn(await lockedUp(opts, clusterLockPath)));
}

/** What `status` reports. */
export interface ClusterStatus {
  dir: string;
  up: boolean;
  netns: boolean;
  daemons: Record<string, number | null>;
  kubeconfig: string;
}

/** The state of the cluster in `dir` (no lock needed: read-only). */
export async function clusterStatus(opts: ClusterOptions = {}): Promise<ClusterStatus> {
  const l = defaultLayout(opts.dir ?? defaultClusterDir);
  const pids: Record<string, number | null> = {};
  for (const d of daemons) pids[d] = (await daemonPid(l, d)) ?? null;
  return {
    dir: l.dir,
    up: await isUp(l),
    netns: await netnsExists(l),
    daemons: pids,
    kubeconfig: paths(l).adminKubeconfig,
  };
}
export { archiveLayerPaths } from "./oci.ts";
export { chartNodeValues, paths } from "./layout.ts";
export { cniConflist } from "./config.ts";
export { readSysctls } from "./node.ts";
export { openApi, poll } from "./api.ts";
