/**
 * Peers built from source with Go: each comes from a small tools module under `tools/peers/` that
 * pins its versions (go.mod + go.sum, committed). Binaries land in `.cache/peers/<name>-<version>/`
 * and are reused when present. Go's own module and build caches stay at Go's defaults
 * (`go env GOMODCACHE GOCACHE`), so a machine that built once rebuilds in seconds even from a
 * fresh clone.
 * @module
 */
import { createHash } from "node:crypto";
import { join } from "node:path";
import { duSize, exists, mb, run, which, withFileLock } from "./util.ts";

/** How a Go peer is built. */
export interface GoPeer {
  /** Peer name, also the binary's file name. */
  name: string;
  /** Folder below `tools/peers/` holding the pinning tools module. */
  tools: string;
  /**
   * The Go module whose version names the peer (read from the tools module's go.mod); absent for a
   * program that is entirely the project's own (`v0`).
   */
  module?: string;
  /** The package to build. */
  pkg: string;
  /** `build` for a main package; `test` compiles the package's tests (`go test -c`). */
  kind: "build" | "test";
  /** Cold build minutes on a 2-core machine, for the progress line. */
  coldMinutes: number;
  /** Extra `-X` link flags; `{version}`, `{major}`, `{minor}` come from the module version. */
  xflags?: string[];
  /** Arguments that print the version, run once after building as a smoke check. */
  versionArgs?: string[];
  /** Build environment added to Go's, e.g. `CGO_ENABLED: "0"` for a static binary (images). */
  env?: Record<string, string>;
}

/** The pinned version of `module` in a go.mod text: a `replace` target wins over `require`. */
export function moduleVersion(goMod: string, module: string): string {
  const esc = module.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
  const rep = goMod.match(new RegExp(`^\\s*(?:replace\\s+)?${esc}\\s+=>\\s+\\S+\\s+(v\\S+)`, "m"));
  if (rep) return rep[1];
  const req = goMod.match(new RegExp(`^\\s*(?:require\\s+)?${esc}\\s+(v[^\\s/]+)`, "m"));
  if (!req) throw new Error(`go.mod does not require ${module}`);
  return req[1];
}

/** The `go` directive of a go.mod text, e.g. "1.26.5". */
export function goDirective(goMod: string): string {
  const m = goMod.match(/^go\s+(\d+\.\d+(?:\.\d+)?)\s*$/m);
  if (!m) throw new Error("go.mod has no go directive");
  return m[1];
}

/** Compares dotted versions ("1.26.5" vs "1.26"); negative when a < b. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number), pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

interface GoToolchain {
  bin: string;
  version: string;
}

let toolchain: Promise<GoToolchain> | undefined;

/** Finds the Go toolchain: $AETHER_GO, `go` on PATH, or /usr/local/go/bin/go. */
export function findGo(): Promise<GoToolchain> {
  toolchain ??= (async () => {
    const candidates = [Deno.env.get("AETHER_GO"), await which("go"), "/usr/local/go/bin/go"];
    for (const bin of candidates) {
      if (!bin || !(await exists(bin))) continue;
      const out = await run(bin, ["env", "GOVERSION"], { env: { GOTOOLCHAIN: "local" } });
      const version = out.trim().replace(/^go/, "");
      return { bin, version };
    }
    throw new Error(
      "the Go toolchain is missing: SPIRE, kube-apiserver, the Gateway API conformance suite and " +
        "egctl are built from source. Install Go ≥ 1.26.5 (e.g. the official tarball into " +
        "/usr/local/go) and put it on PATH, or point AETHER_GO at its go binary",
    );
  })();
  return toolchain;
}

/** Reads the pinned version of a peer from its tools module (`v0` for the project's own code). */
export async function goPeerVersion(root: string, peer: GoPeer): Promise<string> {
  const goMod = await Deno.readTextFile(join(root, "tools", "peers", peer.tools, "go.mod"));
  return peer.module ? moduleVersion(goMod, peer.module) : "v0";
}

/**
 * The cache key of a build: the pinned version, plus a digest of the tools module's own `.go` files
 * when it has any (a trimmed `main`), so editing them rebuilds.
 */
export async function goPeerCacheKey(toolsDir: string, version: string): Promise<string> {
  const files: string[] = [];
  for await (const e of Deno.readDir(toolsDir)) {
    if (e.isFile && (e.name.endsWith(".go") || e.name === "go.sum")) files.push(e.name);
  }
  if (!files.some((f) => f.endsWith(".go"))) return version;
  const h = createHash("sha256");
  for (const f of files.sort()) h.update(f).update(await Deno.readFile(join(toolsDir, f)));
  return `${version}-${h.digest("hex").slice(0, 8)}`;
}

/**
 * Returns the peer's binary, building it when `.cache/peers/<name>-<version>/<name>` is missing.
 * Builds are serialized machine-wide through a lock file (the machines have 2 cores).
 */
export async function ensureGoPeer(root: string, cacheDir: string, peer: GoPeer): Promise<string> {
  const toolsDir = join(root, "tools", "peers", peer.tools);
  const goMod = await Deno.readTextFile(join(toolsDir, "go.mod"));
  const version = peer.module ? moduleVersion(goMod, peer.module) : "v0";
  const key = await goPeerCacheKey(toolsDir, version);
  const dir = join(cacheDir, `${peer.name}-${key}`);
  const bin = join(dir, peer.name);
  if (await exists(bin)) return bin;
  await Deno.mkdir(cacheDir, { recursive: true });
  return await withFileLock(join(cacheDir, ".go-build.lock"), async () => {
    if (await exists(bin)) return bin; // another process built it while we waited
    const go = await findGo();
    const need = goDirective(goMod);
    if (compareVersions(go.version, need) < 0) {
      throw new Error(
        `peer ${peer.name} needs Go ≥ ${need} (tools/peers/${peer.tools}/go.mod) but ${go.bin} ` +
          `is go${go.version}: install Go ≥ ${need} and put it on PATH (or set AETHER_GO)`,
      );
    }
    const started = Date.now();
    const envNote = peer.env
      ? ` (${Object.entries(peer.env).map((e) => e.join("=")).join(" ")})`
      : "";
    console.error(
      `[peers] building ${peer.name} ${version} from ${peer.module ?? toolsDir} with ` +
        `go${go.version}${envNote} ` +
        `(cold: ~${peer.coldMinutes} min on 2 cores; with a warm Go cache: seconds) …`,
    );
    const tick = setInterval(() => {
      const s = Math.round((Date.now() - started) / 1000);
      console.error(`[peers] … still building ${peer.name} (${s}s)`);
    }, 60_000);
    const tmp = `${dir}.tmp-${Deno.pid}`;
    try {
      await removeStale(cacheDir, `${peer.name}-${key}.tmp-`);
      await Deno.mkdir(tmp, { recursive: true });
      const out = join(tmp, peer.name);
      await run("nice", ["-n", "19", go.bin, ...goArgs(peer, version, out), peer.pkg], {
        cwd: toolsDir,
        env: { GOTOOLCHAIN: "local", GOFLAGS: "-mod=readonly", ...peer.env },
      });
      if (peer.versionArgs) await run(out, peer.versionArgs); // smoke check before it is used
      await Deno.remove(dir, { recursive: true }).catch(() => {});
      await Deno.rename(tmp, dir);
    } finally {
      clearInterval(tick);
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
    const secs = Math.round((Date.now() - started) / 1000);
    console.error(
      `[peers] ${peer.name} ${version} ready in ${secs}s: ${bin} (${mb(await duSize(bin))})`,
    );
    return bin;
  });
}

/** `go build …`/`go test -c …` arguments (before the package) writing the binary to `out`. */
export function goArgs(peer: GoPeer, version: string, out: string): string[] {
  const [major, minor] = version.replace(/^v/, "").split(".");
  const expand = (f: string) =>
    f.replaceAll("{version}", version).replaceAll("{major}", major).replaceAll("{minor}", minor);
  const ldflags = ["-s", "-w", ...(peer.xflags ?? []).map((f) => `-X ${expand(f)}`)].join(" ");
  return peer.kind === "build"
    ? ["build", "-trimpath", "-buildvcs=false", `-ldflags=${ldflags}`, "-o", out]
    : ["test", "-c", "-trimpath", `-ldflags=${ldflags}`, "-o", out];
}

/** Removes temp folders of builds that were killed (only called while holding the build lock). */
async function removeStale(cacheDir: string, prefix: string): Promise<void> {
  for await (const e of Deno.readDir(cacheDir)) {
    if (e.name.startsWith(prefix)) await Deno.remove(join(cacheDir, e.name), { recursive: true });
  }
}

/** Where `go mod download` put a module version (downloading it into Go's module cache first). */
export async function goModuleDir(module: string, version: string): Promise<string> {
  const go = await findGo();
  const tmp = await Deno.makeTempDir({ prefix: "aether-gomod-" });
  try {
    // Outside any module, so nothing edits a go.mod/go.sum; the checksum database still verifies it.
    const out = await run(go.bin, ["mod", "download", "-json", `${module}@${version}`], {
      cwd: tmp,
      env: { GOTOOLCHAIN: "local", GOFLAGS: "" },
    });
    const info = JSON.parse(out) as { Dir?: string; Error?: string };
    if (!info.Dir) throw new Error(`go mod download ${module}@${version}: ${info.Error ?? out}`);
    return info.Dir;
  } finally {
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}
