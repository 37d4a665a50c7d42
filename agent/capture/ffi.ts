/**
 * libnftables and the three libc calls that bind it to a pod's network namespace, through
 * `Deno.dlopen` (needs `--allow-ffi`; Debian `libnftables1`, which comes with `nftables`).
 *
 * A libnftables context opens its netlink socket in `nft_ctx_new`, so a context works in the
 * netns of the thread that made it, for its whole life, whatever thread later uses it. `setns`
 * is per thread: {@link NftLibrary.contextIn} enters the pod netns, makes the context and goes
 * back, synchronously on the JS thread (FFI calls that are not `nonblocking` run on it), so no
 * other JS runs in between. JSON input on nft 1.0.6 is parsed only when the context has the
 * *output* JSON flag (the input flag came in 1.1.0), so every context has it.
 * @module
 */

const LIBNFTABLES = "libnftables.so.1";
/** `NFT_CTX_OUTPUT_JSON` (libnftables `nftables.h`). */
const NFT_CTX_OUTPUT_JSON = 1 << 4;
const O_RDONLY = 0;
const O_CLOEXEC = 0o2000000;
const CLONE_NEWNET = 0x40000000;

const nftSymbols = {
  nft_ctx_new: { parameters: ["u32"], result: "pointer" },
  nft_ctx_free: { parameters: ["pointer"], result: "void" },
  nft_ctx_output_set_flags: { parameters: ["pointer", "u32"], result: "void" },
  nft_ctx_buffer_output: { parameters: ["pointer"], result: "i32" },
  nft_ctx_buffer_error: { parameters: ["pointer"], result: "i32" },
  nft_ctx_get_output_buffer: { parameters: ["pointer"], result: "pointer" },
  nft_ctx_get_error_buffer: { parameters: ["pointer"], result: "pointer" },
  nft_run_cmd_from_buffer: { parameters: ["pointer", "buffer"], result: "i32" },
} as const;

const libcSymbols = {
  // open(2) is variadic; without O_CREAT the mode is never read, so a third fixed 0 is harmless.
  open: { parameters: ["buffer", "i32", "i32"], result: "i32" },
  close: { parameters: ["i32"], result: "i32" },
  setns: { parameters: ["i32", "i32"], result: "i32" },
  strerror: { parameters: ["i32"], result: "pointer" },
  __errno_location: { parameters: [], result: "pointer" },
} as const;

/** errno names the messages use (Linux numbers). */
const ERRNO: Record<number, string> = {
  1: "EPERM",
  2: "ENOENT",
  9: "EBADF",
  13: "EACCES",
  20: "ENOTDIR",
  22: "EINVAL",
};

/** Why a netns or libnftables call failed; `code` says which way. */
export class CaptureError extends Error {
  override name = "CaptureError";
  constructor(
    message: string,
    /** `library`: no libnftables; `netns-gone`: the path names no netns any more; `netns`: it
     * could not be entered; `nft`: libnftables refused the batch; `spec`: the spec is invalid. */
    readonly code: "library" | "netns-gone" | "netns" | "nft" | "spec",
  ) {
    super(message);
  }
}

/** What one libnftables command buffer did. */
export interface NftResult {
  ok: boolean;
  /** What it printed (the JSON listing of a `list`). */
  output: string;
  /** Its error messages, trimmed. */
  error: string;
}

const cstring = (s: string) => new TextEncoder().encode(s + "\0");

/** One libnftables context, bound to the netns it was made in. */
export class NftContext {
  #ptr: Deno.PointerValue;

  constructor(readonly lib: NftLibrary, ptr: Deno.PointerObject) {
    this.#ptr = ptr;
  }

  /** Runs one command buffer (a JSON document, one kernel batch). */
  run(commands: string): NftResult {
    if (this.#ptr === null) throw new Error("libnftables context used after free");
    const s = this.lib.nft.symbols;
    const rc = s.nft_run_cmd_from_buffer(this.#ptr, cstring(commands));
    // Reading a buffer also empties it for the next command.
    const read = (p: Deno.PointerValue) => p ? Deno.UnsafePointerView.getCString(p) : "";
    const output = read(s.nft_ctx_get_output_buffer(this.#ptr));
    const error = read(s.nft_ctx_get_error_buffer(this.#ptr)).trim();
    return { ok: rc === 0, output, error };
  }

  /** Frees the context and closes its netlink socket (idempotent). */
  free(): void {
    if (this.#ptr === null) return;
    this.lib.nft.symbols.nft_ctx_free(this.#ptr);
    this.#ptr = null;
  }
}

/** libnftables and libc, opened once per owner (the applier); {@link close} unloads both. */
export class NftLibrary {
  readonly nft: Deno.DynamicLibrary<typeof nftSymbols>;
  readonly libc: Deno.DynamicLibrary<typeof libcSymbols>;
  /** The JS thread's own netns, to go back to after making a context. */
  readonly #home: number;

  /** Opens the libraries; throws a CaptureError saying what to install when they are missing. */
  constructor(path = LIBNFTABLES) {
    if (Deno.build.os !== "linux") {
      throw new CaptureError(`capture needs Linux (nftables), not ${Deno.build.os}`, "library");
    }
    try {
      this.nft = Deno.dlopen(path, nftSymbols);
    } catch (e) {
      throw new CaptureError(
        `cannot load ${path} (${(e as Error).message}): install the Debian package libnftables1 ` +
          `(it comes with nftables) or run the aether image, which carries it`,
        "library",
      );
    }
    this.libc = Deno.dlopen("libc.so.6", libcSymbols);
    this.#home = this.#open("/proc/thread-self/ns/net");
    if (this.#home < 0) {
      const why = this.#errno();
      this.close();
      throw new CaptureError(`cannot open the agent's own netns: ${why}`, "netns");
    }
  }

  #open(path: string): number {
    return this.libc.symbols.open(cstring(path), O_RDONLY | O_CLOEXEC, 0);
  }

  /** The last failed call's errno as `ENAME (text)`. */
  #errno(): string {
    const s = this.libc.symbols;
    const p = s.__errno_location();
    const n = p ? new Deno.UnsafePointerView(p).getInt32() : 0;
    const text = s.strerror(n);
    return `${ERRNO[n] ?? `errno ${n}`} (${text ? Deno.UnsafePointerView.getCString(text) : "?"})`;
  }

  /**
   * Runs `fn` synchronously on the JS thread inside the netns at `netnsPath` (a
   * `/var/run/netns/…` or `/proc/<pid>/ns/net` path) and comes back before anything else runs:
   * every socket `fn` opens lives in that netns. Throws CaptureError `netns-gone` when the path is
   * no netns any more, `netns` when it cannot be entered (the agent needs CAP_SYS_ADMIN for setns).
   */
  inNetns<T>(netnsPath: string, fn: () => T): T {
    const s = this.libc.symbols;
    const fd = this.#open(netnsPath);
    if (fd < 0) {
      const why = this.#errno();
      throw why.startsWith("ENOENT")
        ? new CaptureError(`netns ${netnsPath} is gone (${why}): the pod has left`, "netns-gone")
        : new CaptureError(`cannot open netns ${netnsPath}: ${why}`, "netns");
    }
    try {
      if (s.setns(fd, CLONE_NEWNET) !== 0) {
        const why = this.#errno();
        throw new CaptureError(
          `cannot enter netns ${netnsPath}: ${why}` +
            (why.startsWith("EINVAL") ? ": the path is not a network namespace" : "") +
            (why.startsWith("EPERM") ? ": the agent needs CAP_SYS_ADMIN (run it privileged)" : ""),
          why.startsWith("EINVAL") ? "netns-gone" : "netns",
        );
      }
      try {
        return fn();
      } finally {
        // Back before anything else runs on this thread: staying would put every later socket
        // of this thread into the pod.
        if (s.setns(this.#home, CLONE_NEWNET) !== 0 && s.setns(this.#home, CLONE_NEWNET) !== 0) {
          const why = this.#errno();
          // deno-lint-ignore no-unsafe-finally
          throw new Error(`cannot return to the agent's netns (${why}): restart the agent`);
        }
      }
    } finally {
      s.close(fd);
    }
  }

  /** A context whose netlink socket lives in the netns at `netnsPath` (see {@link inNetns}). */
  contextIn(netnsPath: string): NftContext {
    const ptr = this.inNetns(netnsPath, () => this.nft.symbols.nft_ctx_new(0));
    if (!ptr) throw new CaptureError(`nft_ctx_new failed in netns ${netnsPath}`, "nft");
    const n = this.nft.symbols;
    n.nft_ctx_output_set_flags(ptr, NFT_CTX_OUTPUT_JSON);
    n.nft_ctx_buffer_output(ptr);
    n.nft_ctx_buffer_error(ptr);
    return new NftContext(this, ptr);
  }

  /** The IP addresses of the interfaces of the netns at `netnsPath` (loopback left out). */
  addressesIn(netnsPath: string): string[] {
    return this.inNetns(netnsPath, () => Deno.networkInterfaces())
      .filter((i) => i.name !== "lo")
      .map((i) => i.address.replace(/%.*$/, ""));
  }

  /** Unloads both libraries (contexts must be freed first). */
  close(): void {
    if (this.#home >= 0) this.libc.symbols.close(this.#home);
    this.libc.close();
    this.nft.close();
  }
}
