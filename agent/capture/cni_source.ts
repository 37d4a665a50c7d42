/**
 * The pods the CNI plugin reported on this node, as a Source: one PodNetwork object per pod
 * (`aether.io/v1alpha1`, named as the pod; its netns path, addresses, sandbox and UID), a partition
 * of the node agent's MergedSource next to the API server, so a pod's netns reaches the node
 * translator through resolve like every other input (lib/gatewayapi/mesh/pods.ts joins it with
 * the Pod). Each record is also a file under the agent's state dir, written (temp + rename)
 * before the ADD that made it is answered and removed by DEL: a restarted agent delivers its pods'
 * records in its first revision, for pods that will never see another ADD. On start, a record
 * whose netns is gone (its folder still there) is forgotten: a DEL missed while the agent was
 * down. Objects are handed over by identity until they change (the Source contract).
 * @module
 */
import { dirname, join } from "node:path";
import type { Logger } from "../../lib/log/mod.ts";
import type { Source, SourceObject, SourceRevision } from "../../lib/source/mod.ts";
import {
  POD_NETWORK_API_VERSION,
  POD_NETWORK_KIND,
  podNetworkObject,
  type PodNetworkSpec,
} from "../../lib/gatewayapi/mod.ts";
import type { PodAttachment } from "../../cni/mod.ts";

/** Options of {@link CniSource}. */
export interface CniSourceOptions {
  /** Where the records live (e.g. `<state dir>/cni-pods`); created when missing. */
  dir: string;
  logger?: Logger;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The attachment a PodNetwork object records (pure). */
export function attachmentOf(o: SourceObject): PodAttachment {
  const s = o.spec as PodNetworkSpec;
  return {
    namespace: o.metadata.namespace ?? "",
    name: o.metadata.name,
    ...(s.podUID ? { uid: s.podUID } : {}),
    containerId: s.containerID,
    ifName: s.ifName,
    netnsPath: s.netnsPath,
    ips: [...s.ips],
  };
}

/** The PodNetwork object of an attachment (pure). */
export function recordOf(a: PodAttachment): SourceObject {
  return podNetworkObject(a.namespace, a.name, {
    ...(a.uid ? { podUID: a.uid } : {}),
    containerID: a.containerId,
    ifName: a.ifName,
    netnsPath: a.netnsPath,
    ips: [...a.ips],
  });
}

/** Whether `text` is a record file this source wrote (pure); the object when it is. */
export function parseRecord(text: string): SourceObject | undefined {
  let o: SourceObject;
  try {
    o = JSON.parse(text);
  } catch {
    return undefined;
  }
  const s = o?.spec as Partial<PodNetworkSpec> | undefined;
  const ok = o?.apiVersion === POD_NETWORK_API_VERSION && o.kind === POD_NETWORK_KIND &&
    NAME.test(o.metadata?.name ?? "") && NAME.test(o.metadata?.namespace ?? "") &&
    typeof s?.containerID === "string" && typeof s.ifName === "string" &&
    typeof s.netnsPath === "string" && s.netnsPath !== "" && Array.isArray(s.ips) &&
    s.ips.every((ip) => typeof ip === "string") &&
    (s.podUID === undefined || typeof s.podUID === "string");
  return ok ? recordOf(attachmentOf(o)) : undefined;
}

const exists = (path: string) => Deno.lstat(path).then(() => true, () => false);

/** The pods' network records: a Source, and where the CNI server keeps attachments. */
export class CniSource implements Source {
  /** The records by `namespace/name`. */
  readonly #records = new Map<string, SourceObject>();
  #listener?: (revision: SourceRevision) => void;
  #revision = 0;
  /** File writes and removals, one after another (the last word on a file is the last call). */
  #io: Promise<void> = Promise.resolve();

  constructor(readonly options: CniSourceOptions) {}

  /** The records' files' folder. */
  get dir(): string {
    return this.options.dir;
  }

  async start(onRevision: (revision: SourceRevision) => void): Promise<void> {
    await Deno.mkdir(this.dir, { recursive: true });
    for await (const e of Deno.readDir(this.dir)) {
      if (!e.isFile || !e.name.endsWith(".json")) continue;
      const path = join(this.dir, e.name);
      const o = parseRecord(await Deno.readTextFile(path).catch(() => ""));
      if (!o) {
        this.options.logger?.warn("ignoring a file that is not a pod network record", { path });
        continue;
      }
      const a = attachmentOf(o);
      if (!(await exists(a.netnsPath)) && (await exists(dirname(a.netnsPath)))) {
        this.options.logger?.info("forgetting a pod whose netns is gone", {
          pod: `${a.namespace}/${a.name}`,
          netns: a.netnsPath,
        });
        await Deno.remove(path).catch(() => {});
        continue;
      }
      this.#records.set(`${a.namespace}/${a.name}`, o);
    }
    this.#listener = onRevision;
    this.#emit();
  }

  async stop(): Promise<void> {
    this.#listener = undefined;
    await this.#io;
  }

  /** The attachments recorded now, by pod. */
  attachments(): PodAttachment[] {
    return [...this.#records.values()].map(attachmentOf);
  }

  /** Records `a` (its file first), replacing the pod's earlier record. */
  async attach(a: PodAttachment): Promise<void> {
    const o = recordOf(a);
    const key = `${a.namespace}/${a.name}`;
    await this.#queue(async () => {
      const path = this.#path(key), tmp = `${path}.tmp`;
      await Deno.mkdir(this.dir, { recursive: true });
      await Deno.writeTextFile(tmp, JSON.stringify(o) + "\n", { mode: 0o600 });
      await Deno.rename(tmp, path);
    });
    this.#records.set(key, o);
    this.#emit();
  }

  /** Forgets the record of `containerId` on `ifName` (a pod's newer sandbox keeps its own). */
  async detach(containerId: string, ifName: string): Promise<void> {
    await this.#forget((a) => a.containerId === containerId && a.ifName === ifName);
  }

  /** The record of `containerId` on `ifName`. */
  attachment(containerId: string, ifName: string): PodAttachment | undefined {
    return this.attachments().find((a) => a.containerId === containerId && a.ifName === ifName);
  }

  /** Forgets every record not in `valid`. */
  async retain(valid: readonly { containerId: string; ifName: string }[]): Promise<void> {
    const keep = new Set(valid.map((v) => `${v.containerId}\0${v.ifName}`));
    await this.#forget((a) => !keep.has(`${a.containerId}\0${a.ifName}`));
  }

  async #forget(match: (a: PodAttachment) => boolean): Promise<void> {
    const gone = [...this.#records].filter(([, o]) => match(attachmentOf(o))).map(([k]) => k);
    if (gone.length === 0) return;
    for (const key of gone) this.#records.delete(key);
    this.#emit();
    await this.#queue(async () => {
      for (const key of gone) await Deno.remove(this.#path(key)).catch(() => {});
    });
  }

  #path(key: string): string {
    return join(this.dir, `${key.replace("/", "_")}.json`);
  }

  #queue(job: () => Promise<void>): Promise<void> {
    const run = this.#io.then(job);
    this.#io = run.catch(() => {});
    return run;
  }

  #emit(): void {
    if (!this.#listener) return;
    const keys = [...this.#records.keys()].sort();
    const objects = keys.map((k) => this.#records.get(k)!);
    this.#listener({
      revision: ++this.#revision,
      objects,
      problems: [],
      origins: new Map(keys.map((k) => [`${POD_NETWORK_KIND}/${k}`, this.#path(k)])),
      kinds: [POD_NETWORK_KIND],
      // Made here from input the plugin handler validated, as admission would take them: the
      // merged revision stays admitted when the API server's is.
      admitted: true,
    });
  }
}
