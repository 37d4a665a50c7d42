/**
 * The capture applier: makes a pod netns's `inet aether` table what a spec says, through
 * libnftables in process. One context per netns path, made inside that netns and kept for the
 * pod's life (its netlink socket also keeps the netns alive: {@link NftApplier.remove} frees it).
 * The applier remembers what it applied, so a change of VIPs is one set-sync batch; anything
 * else, a first apply whose table is not already right, and a sync that fails (the table
 * drifted) are one atomic full replace. A node's pods share one spec object per revision (a
 * spec is never changed once passed in), so the canonical spec and the JSON documents are made
 * once per spec, not once per pod.
 *
 * ```ts
 * const applier = new NftApplier();
 * applier.apply("/var/run/netns/cni-1234", { vips, capturePort: 15001 }); // "replaced"
 * applier.read("/var/run/netns/cni-1234");   // ListedTable (spec, problems, counters)
 * applier.remove("/var/run/netns/cni-1234"); // idempotent; the netns may be gone
 * ```
 * @module
 */
import {
  type CaptureSpec,
  deleteTable,
  type ListedTable,
  listTable,
  type NftDocument,
  NftSpecError,
  normalizeSpec,
  parseTable,
  replaceTable,
  sameSpec,
  syncSets,
} from "../../lib/nft/mod.ts";
import { CaptureError, type NftContext, NftLibrary } from "./ffi.ts";

/** How an apply changed the table. */
export type ApplyOutcome = "replaced" | "synced" | "unchanged";

/** What the capture sink needs from an applier (the FFI one, or a test's fake). */
export interface CaptureApplier {
  /**
   * Makes the table in the netns at `netnsPath` what `spec` says. `replace` forces a full
   * replace (drift repair). Throws CaptureError.
   */
  apply(netnsPath: string, spec: CaptureSpec, options?: { replace?: boolean }): ApplyOutcome;
  /** The table read back; undefined when the netns has none. Throws CaptureError. */
  read(netnsPath: string): ListedTable | undefined;
  /** Removes the table and forgets the netns; idempotent, and a gone netns is no error. */
  remove(netnsPath: string): void;
  /** Frees every context; tables stay (an agent restart must not uncapture pods). */
  close(): void;
}

interface Held {
  ctx: NftContext;
  /** The netns's identity (nsfs inode) when the context was made. */
  dev: number;
  ino: number;
  /** What this applier last put there; undefined until the first apply. */
  applied?: CaptureSpec;
}

/** The identity of the netns a path names, or undefined when the path is gone. */
function netnsId(path: string): { dev: number; ino: number } | undefined {
  try {
    const st = Deno.statSync(path);
    return { dev: st.dev, ino: st.ino ?? 0 };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return undefined;
    throw new CaptureError(`cannot stat netns ${path}: ${(e as Error).message}`, "netns");
  }
}

/** A set-sync document: JSON, undefined when a replace is needed; `empty` when nothing changes. */
interface Sync {
  json: string | undefined;
  empty: boolean;
}

/**
 * What is made from specs, by object identity (weakly: it goes with the specs): the canonical
 * spec of an input, the replace document of a canonical spec, the sync document between two.
 */
class Docs {
  readonly canonical = new WeakMap<CaptureSpec, CaptureSpec>();
  readonly replace = new WeakMap<CaptureSpec, string>();
  readonly sync = new WeakMap<CaptureSpec, WeakMap<CaptureSpec, Sync>>();
}

/** The libnftables (FFI) applier; see the module doc. */
export class NftApplier implements CaptureApplier {
  readonly #lib: NftLibrary;
  readonly #held = new Map<string, Held>();
  readonly #docs = new Docs();

  /** Opens libnftables (`path` for tests); throws CaptureError `library` when it is missing. */
  constructor(path?: string) {
    this.#lib = new NftLibrary(path);
  }

  /** How many netns contexts are open. */
  get contexts(): number {
    return this.#held.size;
  }

  /** The context for `netnsPath`, made (or remade, when the path names a new netns) as needed. */
  #context(netnsPath: string): Held {
    const id = netnsId(netnsPath);
    const held = this.#held.get(netnsPath);
    if (held && id && id.ino === held.ino && id.dev === held.dev) return held;
    // Gone, or the path names another netns now: the old context goes (and its netns with it).
    if (held) this.#forget(netnsPath);
    if (!id) {
      throw new CaptureError(`netns ${netnsPath} is gone: the pod has left`, "netns-gone");
    }
    const fresh: Held = { ctx: this.#lib.contextIn(netnsPath), ...id };
    this.#held.set(netnsPath, fresh);
    return fresh;
  }

  #forget(netnsPath: string): void {
    this.#held.get(netnsPath)?.ctx.free();
    this.#held.delete(netnsPath);
  }

  #canonical(input: CaptureSpec): CaptureSpec {
    const known = this.#docs.canonical.get(input);
    if (known) return known;
    let spec: CaptureSpec;
    try {
      spec = normalizeSpec(input);
    } catch (e) {
      if (e instanceof NftSpecError) throw new CaptureError(e.message, "spec");
      throw e;
    }
    this.#docs.canonical.set(input, spec).set(spec, spec);
    return spec;
  }

  #replaceJson(spec: CaptureSpec): string {
    let json = this.#docs.replace.get(spec);
    if (json === undefined) this.#docs.replace.set(spec, json = JSON.stringify(replaceTable(spec)));
    return json;
  }

  #sync(from: CaptureSpec, to: CaptureSpec): Sync {
    let byTo = this.#docs.sync.get(from);
    if (!byTo) this.#docs.sync.set(from, byTo = new WeakMap());
    let sync = byTo.get(to);
    if (!sync) {
      const doc = syncSets(from, to);
      byTo.set(to, sync = { json: doc && JSON.stringify(doc), empty: doc?.nftables.length === 0 });
    }
    return sync;
  }

  #run(held: Held, netnsPath: string, doc: NftDocument | string, what: string): void {
    const r = held.ctx.run(typeof doc === "string" ? doc : JSON.stringify(doc));
    if (r.ok) return;
    const hint = /Operation not permitted/.test(r.error)
      ? ": the agent needs CAP_NET_ADMIN (run it privileged)"
      : "";
    throw new CaptureError(`nft ${what} in netns ${netnsPath} failed: ${r.error}${hint}`, "nft");
  }

  #list(held: Held, netnsPath: string): ListedTable | undefined {
    const r = held.ctx.run(JSON.stringify(listTable()));
    if (!r.ok) {
      // nft 1.0.6 says only this when the table does not exist.
      if (/No such file or directory/.test(r.error)) return undefined;
      throw new CaptureError(`nft list in netns ${netnsPath} failed: ${r.error}`, "nft");
    }
    return parseTable(r.output);
  }

  apply(netnsPath: string, input: CaptureSpec, options: { replace?: boolean } = {}): ApplyOutcome {
    const spec = this.#canonical(input);
    const held = this.#context(netnsPath);
    if (!options.replace) {
      if (held.applied && (held.applied === spec || sameSpec(held.applied, spec))) {
        return "unchanged";
      }
      if (!held.applied) {
        // A table left by an earlier agent that is already right is adopted, not replaced.
        const listed = this.#list(held, netnsPath);
        if (listed && listed.problems.length === 0 && sameSpec(listed.spec, spec)) {
          held.applied = spec;
          return "unchanged";
        }
      } else {
        const sync = this.#sync(held.applied, spec);
        if (sync.empty) {
          held.applied = spec;
          return "unchanged";
        }
        if (sync.json) {
          const r = held.ctx.run(sync.json);
          // A failed sync (an element it deletes is gone: drift) falls through to a replace.
          if (r.ok) {
            held.applied = spec;
            return "synced";
          }
        }
      }
    }
    held.applied = undefined;
    this.#run(held, netnsPath, this.#replaceJson(spec), "replace");
    held.applied = spec;
    return "replaced";
  }

  read(netnsPath: string): ListedTable | undefined {
    const held = this.#context(netnsPath);
    return this.#list(held, netnsPath);
  }

  remove(netnsPath: string): void {
    const id = netnsId(netnsPath);
    if (!id) {
      this.#forget(netnsPath);
      return;
    }
    let held: Held;
    try {
      held = this.#context(netnsPath);
    } catch (e) {
      if (e instanceof CaptureError && e.code === "netns-gone") return;
      throw e;
    }
    try {
      this.#run(held, netnsPath, deleteTable(), "delete");
    } finally {
      this.#forget(netnsPath);
    }
  }

  close(): void {
    for (const path of [...this.#held.keys()]) this.#forget(path);
    this.#lib.close();
  }
}
