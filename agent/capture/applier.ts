/**
 * The capture applier: makes a pod netns's `inet aether` table what a spec says, through
 * libnftables in process. Each operation makes a context inside the pod's netns and frees it
 * when done: a context kept per pod would hold ≈ 640 KiB of libnftables cache (its hash tables)
 * and, through its netlink socket, the netns itself (measured: ≈ 0.95 MiB of agent RSS per pod,
 * docs/performance.md). Per netns path the applier remembers the netns's identity and what it
 * applied, so a change of VIPs is one set-sync batch; anything
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
  /** The addresses of the netns at `netnsPath` (loopback left out). Throws CaptureError. */
  addresses?(netnsPath: string): string[];
  /** Forgets every netns and frees the library; tables stay (a restart must not uncapture pods). */
  close(): void;
}

/** What the applier remembers of one netns path. */
interface Held {
  /** The netns's identity (nsfs inode) when it was first seen at the path. */
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

  /** How many netns paths the applier remembers (pods it applied to and has not removed). */
  get known(): number {
    return this.#held.size;
  }

  /** How many libnftables contexts are open: 0 between operations. */
  get contexts(): number {
    return this.#open;
  }

  #open = 0;

  /**
   * Runs `fn` with what is remembered of `netnsPath` (forgotten first when the path names a new
   * netns now) and a context made inside that netns, freed afterwards.
   */
  #with<T>(netnsPath: string, fn: (held: Held, ctx: NftContext) => T): T {
    const id = netnsId(netnsPath);
    let held = this.#held.get(netnsPath);
    if (held && !(id && id.ino === held.ino && id.dev === held.dev)) {
      // Gone, or the path names another netns now: what was applied there is no longer known.
      this.#forget(netnsPath);
      held = undefined;
    }
    if (!id) {
      throw new CaptureError(`netns ${netnsPath} is gone: the pod has left`, "netns-gone");
    }
    const ctx = this.#lib.contextIn(netnsPath);
    this.#open++;
    try {
      if (!held) this.#held.set(netnsPath, held = { ...id });
      return fn(held, ctx);
    } finally {
      ctx.free();
      this.#open--;
    }
  }

  #forget(netnsPath: string): void {
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

  #run(ctx: NftContext, netnsPath: string, doc: NftDocument | string, what: string): void {
    const r = ctx.run(typeof doc === "string" ? doc : JSON.stringify(doc));
    if (r.ok) return;
    const hint = /Operation not permitted/.test(r.error)
      ? ": the agent needs CAP_NET_ADMIN (run it privileged)"
      : "";
    throw new CaptureError(`nft ${what} in netns ${netnsPath} failed: ${r.error}${hint}`, "nft");
  }

  #list(ctx: NftContext, netnsPath: string): ListedTable | undefined {
    const r = ctx.run(JSON.stringify(listTable()));
    if (!r.ok) {
      // nft 1.0.6 says only this when the table does not exist.
      if (/No such file or directory/.test(r.error)) return undefined;
      throw new CaptureError(`nft list in netns ${netnsPath} failed: ${r.error}`, "nft");
    }
    return parseTable(r.output);
  }

  apply(netnsPath: string, input: CaptureSpec, options: { replace?: boolean } = {}): ApplyOutcome {
    const spec = this.#canonical(input);
    return this.#with(netnsPath, (held, ctx) => this.#apply(held, ctx, netnsPath, spec, options));
  }

  #apply(
    held: Held,
    ctx: NftContext,
    netnsPath: string,
    spec: CaptureSpec,
    options: { replace?: boolean },
  ): ApplyOutcome {
    if (!options.replace) {
      if (held.applied && (held.applied === spec || sameSpec(held.applied, spec))) {
        return "unchanged";
      }
      if (!held.applied) {
        // A table left by an earlier agent that is already right is adopted, not replaced.
        const listed = this.#list(ctx, netnsPath);
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
          const r = ctx.run(sync.json);
          // A failed sync (an element it deletes is gone: drift) falls through to a replace.
          if (r.ok) {
            held.applied = spec;
            return "synced";
          }
        }
      }
    }
    held.applied = undefined;
    this.#run(ctx, netnsPath, this.#replaceJson(spec), "replace");
    held.applied = spec;
    return "replaced";
  }

  addresses(netnsPath: string): string[] {
    return this.#lib.addressesIn(netnsPath);
  }

  read(netnsPath: string): ListedTable | undefined {
    return this.#with(netnsPath, (_held, ctx) => this.#list(ctx, netnsPath));
  }

  remove(netnsPath: string): void {
    const id = netnsId(netnsPath);
    if (!id) {
      this.#forget(netnsPath);
      return;
    }
    try {
      this.#with(netnsPath, (_held, ctx) => this.#run(ctx, netnsPath, deleteTable(), "delete"));
    } catch (e) {
      if (e instanceof CaptureError && e.code === "netns-gone") return;
      throw e;
    } finally {
      this.#forget(netnsPath);
    }
  }

  close(): void {
    this.#held.clear();
    this.#lib.close();
  }
}
