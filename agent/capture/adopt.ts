/**
 * Pods that predate the node agent (running before aether was installed, or while the CNI plugin
 * was not chained): the runtime never ran aether's plugin for them, so no CNI record says where
 * their netns is. The adopter finds it — every netns under the runtime's folder is entered and its
 * addresses read — and records the pod as the plugin would have (a PodNetwork record of its own,
 * container id `adopted-<pod uid>`); capture and the pod's inbound `:15008` then follow like for
 * any recorded pod. Its record goes when the pod leaves the node (the runtime's DEL names the
 * sandbox, which the adopter never knew). Pods outside the mesh are never adopted: host-network
 * pods, pods opted out of capture, pods of the outside namespaces.
 * @module
 */
import type { Logger } from "../../lib/log/mod.ts";
import type { KubeObject } from "../../lib/gatewayapi/mod.ts";
import type { Resolved, Sink } from "../../lib/engine/mod.ts";
import type { PodAttachment } from "../../cni/mod.ts";
import { outsideMesh } from "../identity/mod.ts";

/** Container id prefix of an adopted pod's record. */
export const ADOPTED_PREFIX = "adopted-";

/** A pod on this node the CNI plugin never reported. */
export interface AdoptionCandidate {
  namespace: string;
  name: string;
  uid: string;
  ips: string[];
}

/**
 * The running pods of `nodeName` (with an IP, not terminating, not on the node's network, not opted
 * out, not in `outside`) that no record covers (pure).
 */
export function adoptionCandidates(
  objects: readonly KubeObject[],
  nodeName: string,
  known: readonly PodAttachment[],
  outside: readonly string[],
): AdoptionCandidate[] {
  const recorded = new Set(known.map((a) => `${a.namespace}/${a.name}`));
  const out: AdoptionCandidate[] = [];
  for (const o of objects) {
    if (o.kind !== "Pod" || o.apiVersion !== "v1" || o.spec?.nodeName !== nodeName) continue;
    const st = o.status as { phase?: string; podIPs?: { ip: string }[]; podIP?: string };
    if (st?.phase !== "Running" && st?.phase !== "Pending") continue;
    // A terminating pod is never newly adopted: the runtime's DEL may have run already (its
    // record gone), and its netns goes next; adopting it would capture a namespace being torn down.
    if (o.metadata.deletionTimestamp) continue;
    const ips = st.podIPs?.map((p) => p.ip) ?? (st.podIP ? [st.podIP] : []);
    const namespace = o.metadata.namespace ?? "default";
    const uid = o.metadata.uid as string | undefined;
    if (!ips.length || !uid || outsideMesh(o, outside)) continue;
    if (recorded.has(`${namespace}/${o.metadata.name}`)) continue;
    out.push({ namespace, name: o.metadata.name, uid, ips });
  }
  return out;
}

/** Adopted records whose pod (by UID) is no longer on `nodeName` (pure). */
export function adoptedGone(
  objects: readonly KubeObject[],
  nodeName: string,
  known: readonly PodAttachment[],
): PodAttachment[] {
  const here = new Set<string>();
  for (const o of objects) {
    if (o.kind === "Pod" && o.apiVersion === "v1" && o.spec?.nodeName === nodeName) {
      here.add(`${ADOPTED_PREFIX}${o.metadata.uid}`);
    }
  }
  return known.filter((a) => a.containerId.startsWith(ADOPTED_PREFIX) && !here.has(a.containerId));
}

/** The records the adopter writes through (the CNI source). */
export interface AdoptionRecords {
  attachments(): PodAttachment[];
  attach(a: PodAttachment): Promise<void>;
  detach(containerId: string, ifName: string): Promise<void>;
}

/** Options of {@link PodAdopter}. */
export interface PodAdopterOptions {
  nodeName: string;
  /** The runtime's netns folder as the agent sees it (e.g. `/var/run/netns`). */
  netnsDir: string;
  outsideNamespaces: readonly string[];
  /** The addresses of a netns (the applier's setns + getifaddrs); throws when it is gone. */
  addressesIn(netnsPath: string): string[];
  /** Where records go; undefined until the CNI source exists (nothing is adopted before). */
  records(): AdoptionRecords | undefined;
  logger: Logger;
}

/** A sink: after each resolved revision, adopts the node's unrecorded pods (one scan at a time). */
export class PodAdopter implements Sink {
  readonly name = "adopter";
  #scanning?: Promise<void>;
  #again = false;
  #objects: readonly KubeObject[] = [];
  /** Pods looked for and not found, not logged again. */
  readonly #missed = new Set<string>();

  constructor(readonly options: PodAdopterOptions) {}

  apply({ input }: Resolved): void {
    this.#objects = input.objects;
    this.#again = true;
    this.#scanning ??= (async () => {
      try {
        while (this.#again) {
          this.#again = false;
          await this.#pass().catch((e) =>
            this.options.logger.warn("adopting pods failed", { error: String(e) })
          );
        }
      } finally {
        this.#scanning = undefined;
      }
    })();
  }

  /** Waits for the scan under way (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.#scanning) await this.#scanning;
  }

  async #pass(): Promise<void> {
    const o = this.options;
    const records = o.records();
    if (!records) return;
    const known = records.attachments();
    for (const a of adoptedGone(this.#objects, o.nodeName, known)) {
      await records.detach(a.containerId, a.ifName);
    }
    const want = adoptionCandidates(this.#objects, o.nodeName, known, o.outsideNamespaces);
    if (!want.length) return;
    const byIp = await this.#netnsByAddress();
    for (const c of want) {
      const netnsPath = c.ips.map((ip) => byIp.get(ip)).find(Boolean);
      const key = `${c.namespace}/${c.name}`;
      if (!netnsPath) {
        if (!this.#missed.has(key)) o.logger.warn("no netns found for a pod", { pod: key });
        this.#missed.add(key);
        continue;
      }
      o.logger.info("adopting a pod that predates the agent", { pod: key, netns: netnsPath });
      await records.attach({
        namespace: c.namespace,
        name: c.name,
        uid: c.uid,
        containerId: `${ADOPTED_PREFIX}${c.uid}`,
        ifName: "eth0",
        netnsPath,
        ips: c.ips,
      });
    }
  }

  async #netnsByAddress(): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const dir = this.options.netnsDir;
    try {
      for await (const e of Deno.readDir(dir)) {
        const path = `${dir}/${e.name}`;
        try {
          for (const ip of this.options.addressesIn(path)) out.set(ip, path);
        } catch {
          // Gone meanwhile, or not a netns: nothing to adopt there.
        }
      }
    } catch (e) {
      this.options.logger.warn("cannot list the netns folder", { dir, error: String(e) });
    }
    return out;
  }
}
