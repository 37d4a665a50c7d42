/**
 * Finds the Envoy binary for `--envoy auto` without ever downloading anything: `envoy` on PATH,
 * else the newest `envoy-<version>/envoy` in the project's peer cache (`$AETHER_PEERS_DIR`, else
 * `.cache/peers/` at the project root). Installing is a separate, explicit step
 * (`deno task peers ensure envoy`).
 * @module
 */
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the project's peer cache is (the same place `deno task peers` installs to). */
export function peerCacheDir(): string {
  return Deno.env.get("AETHER_PEERS_DIR") ??
    join(dirname(fileURLToPath(import.meta.url)), "..", "..", ".cache", "peers");
}

async function isExecutable(path: string): Promise<boolean> {
  try {
    const info = await Deno.stat(path);
    return info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** Compares dotted versions numerically ("1.40.0" > "1.9.2"). */
function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number), pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Options of {@link locateEnvoy} (for tests: another PATH or cache). */
export interface LocateOptions {
  path?: string;
  cacheDir?: string;
}

/**
 * Resolves `--envoy`: a path is returned as is (after checking it is executable), `auto` is
 * looked up as described above. Throws an Error that says how to install Envoy.
 */
export async function locateEnvoy(spec: string, o: LocateOptions = {}): Promise<string> {
  if (spec !== "auto") {
    if (await isExecutable(spec)) return spec;
    throw new Error(`--envoy ${spec}: not an executable file`);
  }
  for (const dir of (o.path ?? Deno.env.get("PATH") ?? "").split(delimiter)) {
    if (dir && await isExecutable(join(dir, "envoy"))) return join(dir, "envoy");
  }
  const cache = o.cacheDir ?? peerCacheDir();
  const versions: string[] = [];
  try {
    for await (const e of Deno.readDir(cache)) {
      const m = /^envoy-(\d+(?:\.\d+)*)$/.exec(e.name);
      if (m && await isExecutable(join(cache, e.name, "envoy"))) versions.push(m[1]);
    }
  } catch { /* no cache */ }
  versions.sort(compareVersions);
  const newest = versions.pop();
  if (newest) return join(cache, `envoy-${newest}`, "envoy");
  throw new Error(
    `--envoy auto: no envoy on PATH and none in ${cache}. Install one with ` +
      "`deno task peers ensure envoy` (Envoy 1.40 into the project cache), put envoy on PATH, " +
      "or pass --envoy <path> (--envoy none runs without Envoy).",
  );
}
