/**
 * Process pods for a kwok node (e2e/peers/kwok_cluster.ts): kwok reports the node's pods Running
 * with an IP and runs nothing; this runner watches the API server's Pods bound to the node and,
 * for each Running pod with an IP, does what a kubelet and its container runtime would: a network
 * namespace on the cluster's CNI bridge with exactly that IP (e2e/netns.ts, static IPAM), aether's
 * CNI plugin chained after it when the node agent has a CNI socket (so the pod is captured before
 * anything in it runs), then each container as a process inside the namespace — only images on an
 * allowlist, mapped to local binaries (e2e/pod_images.ts). A deleted pod's processes are stopped
 * and its namespace removed. A pod that cannot run (image not allowed, CNI failure) gets a Warning
 * Event and a log line, and the runner goes on with the others.
 * @module
 */
import { Logger } from "../lib/log/mod.ts";
import { Registry } from "../lib/metrics/mod.ts";
import { type KubeClient, Reflector } from "../lib/kube/mod.ts";
import { ensurePeer } from "../testbed/peers/mod.ts";
import type { NetPod, PodNetwork } from "./netns.ts";
import { type Proc, spawn } from "./peers/proc.ts";
import { aetherCni, type PodRef } from "./aether_cni.ts";
import { containerRuns, type ImageAllowlist } from "./pod_images.ts";
import { type Exited, readinessPatch, readinessPorts } from "./pod_status.ts";

/** Options of {@link PodRunner}. */
export interface PodRunnerOptions {
  client: KubeClient;
  /** The kwok node whose pods run here. */
  nodeName: string;
  /** The bridge the node's pod IPs are on. */
  net: PodNetwork;
  images: ImageAllowlist;
  /** The node agent's CNI socket: aether's plugin is chained after the bridge. */
  cniSocket?: string;
  /** Prefix of the pods' netns names (default `aether-kp`). */
  netnsPrefix?: string;
  /**
   * The cluster DNS server (kubelet `--cluster-dns`): each pod's `resolv.conf` (in
   * `/etc/netns/<netns>/`, which `ip netns exec` mounts over `/etc/resolv.conf`) names it.
   */
  clusterDns?: string;
  logger?: Logger;
}

/** A pod running here. */
export interface RunningPod extends PodRef {
  ip: string;
  netns: NetPod;
  /** Its containers' processes, by container name. */
  containers: Record<string, Proc>;
  /** Reported Ready: every declared TCP containerPort accepted a connection, none exited. */
  ready: boolean;
}

// deno-lint-ignore no-explicit-any
type Pod = any;

/** A kubelet's resolv.conf for a pod of `namespace` (search list of cluster.local). */
async function writeResolvConf(netns: string, namespace: string, server: string): Promise<void> {
  const dir = `/etc/netns/${netns}`;
  await Deno.mkdir(dir, { recursive: true });
  const search = [`${namespace}.svc.cluster.local`, "svc.cluster.local", "cluster.local"];
  await Deno.writeTextFile(
    `${dir}/resolv.conf`,
    `nameserver ${server}\nsearch ${search.join(" ")}\n`,
  );
}

async function removeResolvConf(netns: string): Promise<void> {
  await Deno.remove(`/etc/netns/${netns}`, { recursive: true }).catch(() => {});
}

const runnable = (p: Pod) =>
  p.status?.phase === "Running" && !!p.status?.podIP && !p.metadata?.deletionTimestamp;

/** Runs the pods the API server binds to one kwok node as processes in network namespaces. */
export class PodRunner {
  readonly #o: PodRunnerOptions;
  readonly #log: Logger;
  readonly #reflector: Reflector<Pod>;
  /** By pod UID. */
  readonly #running = new Map<string, RunningPod>();
  /**
   * Pods (by UID, while they exist) that could not run, with why; a sandbox failure (netns, CNI)
   * is tried again at `retryAt` (1 s, doubling to 30 s, as a kubelet backs off), the rest never.
   */
  readonly #refused = new Map<string, { why: string; retryAt?: number; failures: number }>();
  /** Timers of those retries. */
  readonly #retries = new Set<ReturnType<typeof setTimeout>>();
  /** Event and status writes under way. */
  readonly #events = new Set<Promise<void>>();
  /** Status writes, one after another. */
  #statusQueue: Promise<void> = Promise.resolve();
  /** Readiness probes, by pod UID. */
  readonly #probes = new Map<string, { abort: AbortController; done: Promise<void> }>();
  #pass: Promise<void> | undefined;
  #dirty = false;
  #stopped = false;

  constructor(o: PodRunnerOptions) {
    this.#o = o;
    this.#log = o.logger ?? new Logger("pod-runner");
    const metrics = new Registry();
    this.#reflector = new Reflector<Pod>({
      client: o.client,
      path: "/api/v1/pods",
      kind: "Pod",
      fieldSelector: `spec.nodeName=${o.nodeName}`,
      transform: (raw) => raw,
      onChange: () => this.#kick(),
      logger: this.#log.child("pods"),
      metrics: {
        events: metrics.counter("pod_runner_events_total", "Watch events."),
        lists: metrics.counter("pod_runner_lists_total", "Lists."),
        errors: metrics.counter("pod_runner_errors_total", "List and watch errors."),
      },
    });
  }

  /** Starts watching; resolves after the first list. */
  async start(): Promise<void> {
    await this.#reflector.start();
    this.#kick();
  }

  /** The running pod `namespace/name`, if any. */
  pod(namespace: string, name: string): RunningPod | undefined {
    return [...this.#running.values()].find((p) => p.namespace === namespace && p.name === name);
  }

  /** Every running pod. */
  pods(): RunningPod[] {
    return [...this.#running.values()];
  }

  /** Pods that could not run, `namespace/name` → why. */
  refused(): Map<string, string> {
    return new Map(this.#refused.values().map(({ why }) => [why.split(":")[0], why]));
  }

  /** Stops watching, then every pod (processes, CNI DEL, namespace). */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const t of this.#retries) clearTimeout(t);
    await this.#reflector.stop();
    await this.#pass;
    for (const p of [...this.#running.values()]) await this.#stopPod(p);
    await Promise.all(this.#events);
  }

  #kick(): void {
    if (this.#stopped) return;
    if (this.#pass) {
      this.#dirty = true;
      return;
    }
    this.#pass = (async () => {
      do {
        this.#dirty = false;
        await this.#reconcile().catch((e) => this.#log.error("reconcile", { error: String(e) }));
      } while (this.#dirty && !this.#stopped);
      this.#pass = undefined;
    })();
  }

  async #reconcile(): Promise<void> {
    const want = new Map<string, Pod>();
    for (const p of this.#reflector.values()) if (runnable(p)) want.set(p.metadata.uid, p);
    for (const [uid, p] of this.#running) if (!want.has(uid)) await this.#stopPod(p);
    const seen = new Set(this.#reflector.values().map((p) => p.metadata?.uid));
    for (const uid of [...this.#refused.keys()]) if (!seen.has(uid)) this.#refused.delete(uid);
    for (const [uid, pod] of want) {
      if (this.#stopped) return;
      if (this.#running.has(uid)) continue;
      const refused = this.#refused.get(uid);
      if (refused && !(refused.retryAt !== undefined && Date.now() >= refused.retryAt)) continue;
      await this.#startPod(pod);
    }
  }

  async #startPod(pod: Pod): Promise<void> {
    const ref: PodRef = {
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      uid: pod.metadata.uid,
    };
    const key = `${ref.namespace}/${ref.name}`;
    const runs = containerRuns(pod, this.#o.images);
    if (typeof runs === "string") return await this.#refuse(ref, "Failed", runs);
    let netns: NetPod | undefined;
    const containers: Record<string, Proc> = {};
    try {
      netns = await this.#o.net.addPod(this.#o.netnsPrefix ?? "aether-kp", {
        ip: pod.status.podIP,
      });
      if (this.#o.clusterDns) await writeResolvConf(netns.netns, ref.namespace, this.#o.clusterDns);
      if (this.#o.cniSocket) await aetherCni("ADD", netns, ref, this.#o.cniSocket);
      // Running from here: a container that exits (even at once) is reported, a stop is not.
      this.#running.set(ref.uid, { ...ref, ip: netns.ip, netns, containers, ready: false });
      const ip = await ensurePeer("ip");
      for (const c of runs) {
        const env = Object.entries(c.env).map(([k, v]) => `${k}=${v}`);
        const args = ["netns", "exec", netns.netns, "/usr/bin/env", "-i", ...env, c.command];
        const proc = spawn(`${key}/${c.name}`, ip, [...args, ...c.args]);
        containers[c.name] = proc;
        proc.child.status.then((s) => {
          if (this.#running.get(ref.uid)?.containers[c.name] !== proc) return;
          const output = proc.output().slice(-1000);
          this.#log.warn("container exited", { pod: key, container: c.name, code: s.code, output });
          this.#probes.get(ref.uid)?.abort.abort();
          this.#report(ref, false, "ContainerExited", { name: c.name, code: s.code ?? -1 });
          this.#event(
            ref,
            "ContainerExited",
            `container ${c.name} exited with code ${s.code} (process pods are not restarted); ` +
              `its last output: ${output}`,
          );
        });
      }
    } catch (e) {
      this.#running.delete(ref.uid);
      for (const p of Object.values(containers)) await p.stop();
      if (netns && this.#o.cniSocket) {
        await aetherCni("DEL", netns, ref, this.#o.cniSocket).catch(() => {});
      }
      await netns?.remove();
      if (netns) await removeResolvConf(netns.netns);
      return await this.#refuse(ref, "FailedCreatePodSandBox", (e as Error).message, true);
    }
    this.#log.info("pod started", { pod: key, ip: netns.ip, containers: runs.map((c) => c.name) });
    this.#probe(ref, netns.ip, readinessPorts(pod));
  }

  /** Reports the pod Ready once each of `ports` accepts a connection at `ip` (polled, 200 ms). */
  #probe(ref: PodRef, ip: string, ports: number[]): void {
    const abort = new AbortController();
    const listens = async (port: number) => {
      try {
        const conn = await Deno.connect({ hostname: ip, port, signal: AbortSignal.timeout(1000) });
        conn.close();
        return true;
      } catch {
        return false;
      }
    };
    const done = (async () => {
      while (!abort.signal.aborted) {
        if ((await Promise.all(ports.map(listens))).every((x) => x)) {
          if (abort.signal.aborted || !this.#running.has(ref.uid)) return;
          this.#running.get(ref.uid)!.ready = true;
          await this.#report(ref, true);
          return;
        }
        await new Promise((r) => setTimeout(r, 200));
      }
    })();
    this.#probes.set(ref.uid, { abort, done });
  }

  /**
   * PATCHes the pod's readiness into its status (kwok no longer writes it once it is Running);
   * one write at a time, in order, each from the pod as last seen.
   */
  #report(ref: PodRef, ready: boolean, reason?: string, exited?: Exited): Promise<void> {
    const running = this.#running.get(ref.uid);
    if (running && !ready) running.ready = false;
    const key = `${ref.namespace}/${ref.name}`;
    const write = async () => {
      const pod = this.#reflector.values().find((p) => p.metadata?.uid === ref.uid);
      if (!pod) return;
      const patch = readinessPatch(pod, ready, new Date().toISOString(), reason, exited);
      const path = `/api/v1/namespaces/${ref.namespace}/pods/${ref.name}/status`;
      const res = await this.#o.client.request("PATCH", path, patch)
        .catch((e) => ({ status: 0, json: String(e) }));
      if (res.status >= 300 || res.status === 0) {
        const answer = JSON.stringify(res.json).slice(0, 500);
        this.#log.warn("pod status not written", { pod: key, status: res.status, answer });
      } else this.#log.info("pod status written", { pod: key, ready });
    };
    const written = this.#statusQueue = this.#statusQueue.then(write);
    this.#events.add(written);
    written.finally(() => this.#events.delete(written));
    return written;
  }

  async #stopPod(p: RunningPod): Promise<void> {
    this.#running.delete(p.uid);
    const probe = this.#probes.get(p.uid);
    this.#probes.delete(p.uid);
    probe?.abort.abort();
    await probe?.done;
    for (const proc of Object.values(p.containers)) await proc.stop();
    if (this.#o.cniSocket) {
      await aetherCni("DEL", p.netns, p, this.#o.cniSocket).catch((e) =>
        this.#log.warn("CNI DEL failed", { pod: `${p.namespace}/${p.name}`, error: String(e) })
      );
    }
    await p.netns.remove();
    await removeResolvConf(p.netns.netns);
    this.#log.info("pod stopped", { pod: `${p.namespace}/${p.name}` });
  }

  /**
   * Records that the pod cannot run: a log line and a Warning Event on the pod; `retry`: tried
   * again after a back-off.
   */
  async #refuse(ref: PodRef, reason: string, message: string, retry = false): Promise<void> {
    const key = `${ref.namespace}/${ref.name}`;
    const failures = (this.#refused.get(ref.uid)?.failures ?? 0) + 1;
    const delay = Math.min(1000 * 2 ** (failures - 1), 30_000);
    this.#refused.set(ref.uid, {
      why: `${key}: ${message}`,
      failures,
      ...(retry ? { retryAt: Date.now() + delay } : {}),
    });
    if (retry && !this.#stopped) {
      const timer = setTimeout(() => {
        this.#retries.delete(timer);
        this.#kick();
      }, delay);
      this.#retries.add(timer);
    }
    this.#log.warn("pod cannot run", { pod: key, reason, message, ...(retry ? { delay } : {}) });
    await this.#event(ref, reason, message);
  }

  /** Writes a Warning Event on the pod (awaited by {@link stop} when not by the caller). */
  #event(ref: PodRef, reason: string, message: string): Promise<void> {
    const now = new Date().toISOString();
    const written = this.#o.client.request("POST", `/api/v1/namespaces/${ref.namespace}/events`, {
      apiVersion: "v1",
      kind: "Event",
      metadata: { generateName: `${ref.name}.`, namespace: ref.namespace },
      involvedObject: { apiVersion: "v1", kind: "Pod", ...ref },
      reason,
      message,
      type: "Warning",
      source: { component: "aether-pod-runner", host: this.#o.nodeName },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    }).catch((e) => ({ status: 0, json: String(e) })).then((res) => {
      if (res.status >= 300 || res.status === 0) {
        this.#log.warn("event not written", { pod: `${ref.namespace}/${ref.name}`, reason });
      }
    }).finally(() => this.#events.delete(written));
    this.#events.add(written);
    return written;
  }
}
